package lambdamode

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/cardflow/cardflow/internal/dynamostoretest"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/httpapi"
)

// TestPreviewCardFunction runs the previewCard function as its main.go
// builds it, on DynamoDB Local: a card whose $data repeats a whole-object
// binding is a 400 naming the card's limit, not hundreds of megabytes,
// and each preview counts against the organization's rate in the limits
// table.
func TestPreviewCardFunction(t *testing.T) {
	open, prefix := dynamostoretest.Tables(t)
	store := open(t)
	env := Env{Region: "us-east-1", DynamoDBEndpoint: os.Getenv("DYNAMODB_ENDPOINT"), TablePrefix: prefix,
		AccessKeyID: "local", SecretAccessKey: "local",
		// A window of 10,000 s admitting 3 requests: one seldom ends
		// during the test.
		Limits: cardflow.Limits{RatePerSecond: 0.0003, Burst: 3}}
	h, err := env.NewEndpointFunction(slog.New(slog.NewTextHandler(io.Discard, nil)), httpapi.PreviewCard, app.Deps{CardExpander: cards.Checker{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	org := "org-" + cardflow.NewID(time.Now())
	card := &cardflow.Card{OrganizationID: org, CardName: "repeat", CardPayload: map[string]any{"type": "AdaptiveCard", "version": "1.5",
		"body": []any{map[string]any{"$data": "${$root.items}", "type": "FactSet", "facts": "${$root.facts}"}}}}
	if err := store.SaveCardVersion(ctx, card); err != nil {
		t.Fatal(err)
	}
	facts := make([]any, 100)
	for i := range facts {
		facts[i] = map[string]any{"title": "t", "value": strings.Repeat("v", 350)}
	}
	items := make([]any, 2500)
	for i := range items {
		items[i] = i
	}
	body, _ := json.Marshal(map[string]any{"card_id": card.CardID, "card_version": 1, "data": map[string]any{"facts": facts, "items": items}})
	request := events.APIGatewayProxyRequest{HTTPMethod: "POST", Path: "/v1/adaptive-cards/previewCard", Body: string(body),
		Headers: map[string]string{"content-type": "application/json"},
		RequestContext: events.APIGatewayProxyRequestContext{Authorizer: map[string]any{
			ContextOrganization: org, ContextWorkspace: "ws", ContextScopes: "read", ContextActor: "ann"}}}
	var statuses []int
	for range 4 {
		got, err := h.Handle(ctx, request)
		if err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, got.StatusCode)
		switch got.StatusCode {
		case 400:
			if !strings.Contains(got.Body, "an expanded card may hold at most 256 KB") || len(got.Body) > 4<<10 {
				t.Fatalf("got 400 %.300s, want a short answer naming the limit", got.Body)
			}
		case 429:
		default:
			t.Fatalf("got %d %.300s, want 400 naming the limit or 429", got.StatusCode, got.Body)
		}
	}
	if statuses[2] != 400 || statuses[3] != 429 {
		t.Errorf("statuses: got %v, want three 400 and a 429", statuses)
	}
}
