package loadgen

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// decoders are pooled, since a decoder carries buffers for its state.
var decoders = sync.Pool{New: func() any { return new(decoder) }}

type decoder struct {
	buf bytes.Buffer
	d   jsontext.Decoder
}

// stringAt returns the string at path (names of nested objects) in the
// JSON answer b, reading b only as far as that string: a round trip needs
// one value of each answer, which encoding/json would validate whole and
// then decode, and the status of an execution comes before its log.
func stringAt(b []byte, path ...string) (string, error) {
	dec := decoders.Get().(*decoder)
	defer func() {
		// Keep nothing of b, which the worker reuses.
		dec.buf = bytes.Buffer{}
		dec.d.Reset(&dec.buf)
		decoders.Put(dec)
	}()
	// A bytes.Buffer is read in place, without a copy.
	dec.buf = *bytes.NewBuffer(b)
	d := &dec.d
	d.Reset(&dec.buf)
	for _, name := range path {
		if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
			return "", answerError(path, err)
		}
		for {
			t, err := d.ReadToken()
			if err != nil || t.Kind() == '}' {
				return "", answerError(path, err)
			}
			if t.String() == name {
				break
			}
			if err := d.SkipValue(); err != nil {
				return "", answerError(path, err)
			}
		}
	}
	t, err := d.ReadToken()
	if err != nil || t.Kind() != '"' {
		return "", answerError(path, err)
	}
	return t.String(), nil
}

func answerError(path []string, err error) error {
	if err != nil {
		return fmt.Errorf("answer: %s: %w", strings.Join(path, "."), err)
	}
	return fmt.Errorf("answer: no string %s", strings.Join(path, "."))
}
