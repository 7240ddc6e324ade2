package app_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cards"
)

// TestAreasNeedTheirDependencies: an area built without what its use cases
// need fails at construction, naming what is missing, instead of answering
// a request with 503; a Service lacks the areas whose dependencies it was
// not given, and Need names them.
func TestAreasNeedTheirDependencies(t *testing.T) {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	base, err := app.NewBase(store)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := app.NewRuns(base, idleRunner{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	answers, err := app.NewAnswers(runs)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		build func() error
		want  string // in the error; "" for none
	}{
		{"base without a store", func() error { _, err := app.NewBase(nil); return err }, "store is nil"},
		{"workflow editor without a checker", func() error { _, err := app.NewWorkflowEditor(base, nil); return err }, "workflow checker"},
		{"schedules without a scheduler", func() error { _, err := app.NewSchedules(base, nil); return err }, "scheduler"},
		{"card editor without a checker", func() error { _, err := app.NewCardEditor(base, nil); return err }, "card checker"},
		{"card editor", func() error { _, err := app.NewCardEditor(base, cards.Checker{}); return err }, ""},
		{"card previews without an expander", func() error { _, err := app.NewCardPreviews(base, nil); return err }, "card expander"},
		{"runs without a runner", func() error { _, err := app.NewRuns(base, nil, nil); return err }, "runner"},
		{"answers without runs", func() error { _, err := app.NewAnswers(nil); return err }, "runs"},
		{"links without a verifier", func() error { _, err := app.NewLinks(answers, nil, nil); return err }, "link verifier"},
		{"bot without a replier", func() error { _, err := app.NewBot(answers, nil, nil); return err }, "card replier"},
		{"an area without a base", func() error { _, err := app.NewExecutions(nil); return err }, "base is nil"},
		{"a service with a card reader and no links", func() error { _, err := app.New(store, app.Deps{CardReader: cards.Reader{}}); return err }, "link verifier"},
		{"a service with a deliverer and no runner", func() error { _, err := app.New(store, app.Deps{Deliverer: store}); return err }, "need a runner"},
	} {
		err := tt.build()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: got %v, want no error", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: got %v, want an error naming %q", tt.name, err, tt.want)
		}
	}

	svc, err := app.New(store, app.Deps{CardChecker: cards.Checker{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Need(app.AreaCardEditor, ""); err != nil {
		t.Errorf("Need(CardEditor): got %v, want nil", err)
	}
	err = svc.Need(app.AreaRuns, app.AreaSchedules, app.AreaCardEditor)
	if got, want := errString(err), "app: the service lacks Runs (it needs a runner), Schedules (it needs a scheduler)"; got != want {
		t.Errorf("Need(Runs, Schedules, CardEditor): got %q, want %q", got, want)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
