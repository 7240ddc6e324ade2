package dynamostore

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/execrecord"
)

// pagingClient answers Query from executions held in list order, at most
// perResponse of them per response, as DynamoDB stops at 1 MB. Like
// DynamoDB, it returns LastEvaluatedKey whenever it stopped at Limit or at
// that cap, even when nothing follows.
type pagingClient struct {
	Client
	items       []map[string]types.AttributeValue
	perResponse int
	queries     int
}

func (c *pagingClient) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.queries++
	start := 0
	if k := in.ExclusiveStartKey; k != nil {
		after := stringAttr(k, attrExecution)
		start = slices.IndexFunc(c.items, func(it map[string]types.AttributeValue) bool { return stringAttr(it, attrExecution) < after })
		if start < 0 {
			start = len(c.items)
		}
	}
	n := min(int(*in.Limit), c.perResponse)
	end := min(start+n, len(c.items))
	out := &dynamodb.QueryOutput{Items: c.items[start:end]}
	if end-start == n {
		last := c.items[end-1]
		out.LastEvaluatedKey = map[string]types.AttributeValue{attrExecution: last[attrExecution], attrWorkflow: last[attrWorkflow], attrOrg: last[attrOrg]}
	}
	return out, nil
}

// TestPagesPastResponseLimit checks the paging rules where DynamoDB answers a
// page in several responses: full pages, LastKey only when more follow, no
// empty trailing page, and requests only as many as the responses need.
func TestPagesPastResponseLimit(t *testing.T) {
	for _, total := range []int{0, 4, 5, 6, 23} {
		for _, limit := range []int{5, 7} {
			for _, perResponse := range []int{1, 2, 3, 100} {
				t.Run(fmt.Sprintf("%d items, limit %d, %d per response", total, limit, perResponse), func(t *testing.T) {
					c := &pagingClient{perResponse: perResponse}
					var want []string
					for i := total; i > 0; i-- {
						e := &cardflow.Execution{OrganizationID: "org-1", WorkflowID: "wf-1", WorkflowExecutionID: fmt.Sprintf("ex-%03d", i)}
						w, err := execrecord.Split(e)
						if err != nil {
							t.Fatal(err)
						}
						item, err := headItem(e, w, 1)
						if err != nil {
							t.Fatal(err)
						}
						c.items = append(c.items, item)
						want = append(want, e.WorkflowExecutionID)
					}
					s := &Store{client: c, prefix: DefaultPrefix, log: slog.New(slog.NewTextHandler(io.Discard, nil))}

					var got []string
					opt := cardflow.ListOptions[cardflow.ExecutionKey]{Limit: limit}
					for pageNo := 1; ; pageNo++ {
						before := c.queries
						page, err := s.ListExecutions(t.Context(), "org-1", opt)
						if err != nil {
							t.Fatal(err)
						}
						for _, e := range page.Items {
							got = append(got, e.WorkflowExecutionID)
						}
						// Up to limit+1 items, perResponse at a time.
						if n, most := c.queries-before, (limit+1+perResponse-1)/perResponse; n > most {
							t.Errorf("page %d: got %d queries, want at most %d", pageNo, n, most)
						}
						if page.LastKey == nil {
							if len(page.Items) == 0 && pageNo > 1 {
								t.Errorf("page %d: got an empty trailing page", pageNo)
							}
							break
						}
						if len(page.Items) != limit || len(got) >= total {
							t.Fatalf("page %d: got %d items with LastKey set after %d of %d, want a full page with more to come", pageNo, len(page.Items), len(got), total)
						}
						if want := pageKeyOf(page.Items[limit-1]); *page.LastKey != want {
							t.Errorf("page %d: got LastKey %+v, want %+v", pageNo, *page.LastKey, want)
						}
						opt.After = page.LastKey
					}
					if !slices.Equal(got, want) {
						t.Errorf("got %v, want %v", got, want)
					}
				})
			}
		}
	}
}
