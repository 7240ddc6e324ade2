package dynamostore_test

import (
	"context"
	"sync"
	"testing"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/cardflow/cardflow/internal/storetest"
)

// writeMeter is an SDK middleware that adds up what write requests send:
// their bytes on the wire, and the write request units DynamoDB bills for
// them (1 per KB of each item written, rounded up; twice that inside a
// transaction).
type writeMeter struct {
	mu    sync.Mutex
	bytes int64
	units int64
}

func (m *writeMeter) clientOption(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		err := stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("MeterWriteBytes",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				if req, ok := in.Request.(*smithyhttp.Request); ok && isWrite(awsmiddleware.GetOperationName(ctx)) {
					m.mu.Lock()
					m.bytes += req.ContentLength
					m.mu.Unlock()
				}
				return next.HandleFinalize(ctx, in)
			}), middleware.After)
		if err != nil {
			return err
		}
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("MeterWriteUnits",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				var units int64
				switch p := in.Parameters.(type) {
				case *dynamodb.PutItemInput:
					units = itemUnits(p.Item)
				case *dynamodb.TransactWriteItemsInput:
					for _, op := range p.TransactItems {
						switch {
						case op.Put != nil:
							units += 2 * itemUnits(op.Put.Item)
						default:
							units += 2
						}
					}
				}
				m.mu.Lock()
				m.units += units
				m.mu.Unlock()
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	})
}

func isWrite(op string) bool {
	switch op {
	case "PutItem", "TransactWriteItems", "UpdateItem", "DeleteItem":
		return true
	}
	return false
}

// itemUnits is the write units of an item: its size (names and values) in
// KB, rounded up.
func itemUnits(item map[string]types.AttributeValue) int64 {
	size := 0
	for name, v := range item {
		size += len(name)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			size += len(v.Value)
		case *types.AttributeValueMemberN:
			size += len(v.Value)
		default:
			size++
		}
	}
	return int64((size + 1023) / 1024)
}

func (m *writeMeter) read() (bytes, units int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes, m.units
}

// TestBytesPerStep measures what each step of a 190-step execution with a
// 60 KB input sends to DynamoDB, and the write units it costs: neither may
// grow with the steps before it. Run with -v for the figures BENCHMARKS.md
// gives.
func TestBytesPerStep(t *testing.T) {
	m := &writeMeter{}
	s := newStore(t, m.clientOption)
	var units []int64
	perStep := storetest.MeasureSteps(t, s, func() int64 {
		b, u := m.read()
		units = append(units, u)
		return b
	})
	total := int64(0)
	for _, n := range perStep {
		total += n
	}
	t.Logf("all %d steps: %d bytes", len(perStep), total)
	for _, i := range []int{1, 10, 100, 190} {
		// written is read twice per step: before and after its write.
		t.Logf("step %3d sent %6d bytes, %2d write units", i, perStep[i-1], units[2*i-1]-units[2*i-2])
	}
	// Attribute names, keys, and the JSON the SDK wraps values in, which
	// escapes every quote of the head's event log once more.
	storetest.CheckStepWrites(t, perStep, 4096)
}
