package teams_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/teams"
)

func TestParseTenants(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want map[string]string
		err  string
	}{
		{in: "", want: nil},
		{in: " , ", want: nil},
		{in: "t1=acme", want: map[string]string{"t1": "acme"}},
		{in: " t1 = acme , t2=globex,", want: map[string]string{"t1": "acme", "t2": "globex"}},
		{in: "t1=acme,t1=acme", err: "tenant t1 is mapped to acme and to acme"},
		{in: "t1=acme,t1=globex", err: "a tenant belongs to one organization"},
		{in: "t1", err: `"t1" is not tenant=organization`},
		{in: "=acme", err: "is not tenant=organization"},
		{in: "t1=", err: "is not tenant=organization"},
	} {
		got, err := teams.ParseTenants(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: got %v, %v, want an error mentioning %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: got %v, %v, want %v", tt.in, got, err, tt.want)
		}
	}
}
