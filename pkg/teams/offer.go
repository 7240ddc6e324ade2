package teams

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Offer is what one answer action of a bot card lets an answer hold: the
// action's data, which Teams sends back as the card had it, and the ids of
// the card's inputs, whose values the person chooses. It is signed with
// the action's Ref, so an answer can carry neither a decision that no
// button offers nor a field the card does not have.
type Offer struct {
	Data   map[string]any `json:"d"`
	Inputs []string       `json:"i,omitempty"`
}

// admits checks the data of an answer, its token taken out, against the
// offer: every key of the action's data with its value, and otherwise only
// the card's inputs. Its errors are EINVALID with a message for the person
// who answered.
func (o *Offer) admits(data map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(o.Data)) {
		if slices.Contains(o.Inputs, k) {
			continue // an input of the same id gives the value
		}
		if v, ok := data[k]; !ok || !reflect.DeepEqual(v, o.Data[k]) {
			return cardflow.Errorf(cardflow.EINVALID, "this answer's %q is not what the card's button sends: the card offers no such answer", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(data)) {
		if _, ok := o.Data[k]; !ok && !slices.Contains(o.Inputs, k) {
			return cardflow.Errorf(cardflow.EINVALID, "this answer holds %q, which is neither the button's data nor an input of the card", k)
		}
	}
	return nil
}

// offerOf is the offer of an answer action of a card whose inputs have
// the ids inputs: its data, with the verb of an Action.Execute, which
// comes back as data too.
func offerOf(action, data map[string]any, inputs []string) Offer {
	offered := maps.Clone(data)
	delete(offered, DataKey)
	if verb, _ := action["verb"].(string); verb != "" && action["type"] == "Action.Execute" {
		if _, ok := offered["verb"]; !ok {
			offered["verb"] = verb
		}
	}
	return Offer{Data: offered, Inputs: inputs}
}

// inputIDs lists the ids of a card's inputs, wherever they sit (body,
// containers, show-card cards), sorted.
func inputIDs(card map[string]any) []string {
	var ids []string
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			if typ, _ := t["type"].(string); strings.HasPrefix(typ, "Input.") {
				if id, _ := t["id"].(string); id != "" {
					ids = append(ids, id)
				}
			}
			for _, e := range t {
				walk(e)
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(card)
	slices.Sort(ids)
	return slices.Compact(ids)
}
