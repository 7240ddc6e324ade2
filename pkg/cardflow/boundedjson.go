package cardflow

import (
	"errors"

	"github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// MarshalWithin encodes v as JSON as encoding/json does, stopping as soon
// as the encoding passes limit bytes: over is then true and b nil. A value
// whose parts are shared (one map that a list refers to a million times)
// is small in memory and written out a copy at a time, so encoding it
// whole before measuring it would spend what the limit is there to spare.
// The streaming encoder of go-json-experiment writes to w as its buffer
// fills, so what is held is the limit and about one buffer more.
func MarshalWithin(v any, limit int) (b []byte, over bool, err error) {
	w := &boundedWriter{limit: limit}
	err = json.MarshalWrite(w, v, jsonv1.DefaultOptionsV1())
	switch {
	case errors.Is(err, errPastLimit):
		return nil, true, nil
	case err != nil:
		return nil, false, err
	}
	return w.b, false, nil
}

var errPastLimit = errors.New("past the limit")

// boundedWriter keeps what is written up to limit bytes and refuses
// anything past it.
type boundedWriter struct {
	b     []byte
	limit int
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	if len(w.b)+len(p) > w.limit {
		return 0, errPastLimit
	}
	w.b = append(w.b, p...)
	return len(p), nil
}
