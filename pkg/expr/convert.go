package expr

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"time"
)

// toJSON turns a run-time value into JSON-native Go values, as
// Program.Eval documents.
func toJSON(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, int64, string:
		return x, nil
	case uint64:
		if x > math.MaxInt64 {
			return float64(x), nil
		}
		return int64(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("result %v is not a number JSON can hold", x)
		}
		return x, nil
	case []byte:
		return base64.StdEncoding.EncodeToString(x), nil
	case time.Time:
		return x.Format(time.RFC3339Nano), nil
	case time.Duration:
		return x.String(), nil
	case typeValue:
		return string(x), nil
	case optional:
		if !x.has {
			return nil, nil
		}
		return toJSON(x.v)
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			j, err := toJSON(norm(el))
			if err != nil {
				return nil, err
			}
			out[i] = j
		}
		return out, nil
	case map[string]any, *mapValue:
		out := make(map[string]any, mapSize(x))
		for _, k := range mapKeys(x) {
			val, _ := mapGet(x, k)
			j, err := toJSON(val)
			if err != nil {
				return nil, err
			}
			var key string
			switch k := k.(type) {
			case string:
				key = k
			case int64:
				key = strconv.FormatInt(k, 10)
			case uint64:
				key = strconv.FormatUint(k, 10)
			case bool:
				key = strconv.FormatBool(k)
			default:
				return nil, fmt.Errorf("a map key of type %s cannot be turned into JSON", valueType(k))
			}
			out[key] = j
		}
		return out, nil
	}
	return nil, fmt.Errorf("a value of type %s cannot be turned into JSON", valueType(v))
}
