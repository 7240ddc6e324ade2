package expr

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"time"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// toJSON turns a CEL value into JSON-native Go values, counting their
// encoded size against what the evaluation may return: a list that refers
// to one value many times becomes as many copies, so it is refused once
// past MaxResultBytes rather than copied whole.
func (ev *evaluation) toJSON(val ref.Val) (any, error) {
	n := uint64(scalarBytes)
	switch v := val.(type) {
	case types.String:
		n = uint64(len(v)) + 2
	case types.Bytes:
		n = (uint64(len(v))+2)/3*4 + 2
	case traits.Lister, traits.Mapper:
		n = 2
	}
	if ev.returned += n; ev.returned > MaxResultBytes {
		return nil, &tooLarge{fmt.Sprintf("the result would be more than %s as JSON; an expression may yield at most %s",
			size(MaxResultBytes), size(MaxResultBytes))}
	}
	switch v := val.(type) {
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(v), nil
	case types.Int:
		return int64(v), nil
	case types.Uint:
		if v > math.MaxInt64 {
			return float64(v), nil
		}
		return int64(v), nil
	case types.Double:
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("result %v is not a number JSON can hold", f)
		}
		return f, nil
	case types.String:
		return string(v), nil
	case types.Bytes:
		return base64.StdEncoding.EncodeToString(v), nil
	case types.Timestamp:
		return v.Time.Format(time.RFC3339Nano), nil
	case types.Duration:
		return v.Duration.String(), nil
	case *types.Optional:
		if !v.HasValue() {
			return nil, nil
		}
		return ev.toJSON(v.GetValue())
	case *types.Type:
		return v.TypeName(), nil
	case *types.Err:
		return nil, v
	case traits.Lister:
		n := int(v.Size().(types.Int))
		out := make([]any, n)
		for i := range n {
			ev.returned++ // the comma
			item, err := ev.toJSON(v.Get(types.Int(i)))
			if err != nil {
				return nil, err
			}
			out[i] = item
		}
		return out, nil
	case traits.Mapper:
		out := make(map[string]any, int(v.Size().(types.Int)))
		for it := v.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			key, err := mapKey(k)
			if err != nil {
				return nil, err
			}
			ev.returned += uint64(len(key)) + 4 // quotes, colon, comma
			item, err := ev.toJSON(v.Get(k))
			if err != nil {
				return nil, err
			}
			out[key] = item
		}
		return out, nil
	}
	return nil, fmt.Errorf("a value of type %s cannot be turned into JSON", typeName(val))
}

// mapKey spells a CEL map key as a JSON object key.
func mapKey(k ref.Val) (string, error) {
	switch k := k.(type) {
	case types.String:
		return string(k), nil
	case types.Int:
		return strconv.FormatInt(int64(k), 10), nil
	case types.Uint:
		return strconv.FormatUint(uint64(k), 10), nil
	case types.Bool:
		return strconv.FormatBool(bool(k)), nil
	case types.Double:
		// A number of the variables as a key: written as JSON writes it.
		return strconv.FormatFloat(float64(k), 'g', -1, 64), nil
	}
	return "", fmt.Errorf("a map key of type %s cannot be turned into JSON", typeName(k))
}

// typeName names the type of a CEL value for error messages.
func typeName(val ref.Val) string {
	if val.Type() == types.NullType {
		return "null"
	}
	return val.Type().TypeName()
}
