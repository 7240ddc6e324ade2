package execrecord

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// CheckedHead decodes the head of an execution stored as head and parts,
// and checks that each part is JSON within the decoder's depth without
// decoding it: a part that fails the check would fail Join, and gives a
// cardflow.UnreadableError without a head. Parts that pass it decode,
// since Split wrote them.
func CheckedHead(head []byte, parts []Part) (*cardflow.Execution, error) {
	e, err := DecodeHead(head)
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		known := p.Name == PartInput || p.Name == PartWorkflow || strings.HasPrefix(p.Name, PartStep)
		if !known || !json.Valid(p.Value) {
			return nil, &cardflow.UnreadableError{Err: fmt.Errorf("decode execution part %s: not JSON a read can decode", p.Name)}
		}
	}
	return e, nil
}
