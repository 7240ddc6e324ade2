package teams

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Activity is the part of a Bot Framework activity the messaging endpoint
// reads.
type Activity struct {
	Type         string  `json:"type"`
	Name         string  `json:"name"`
	ID           string  `json:"id"`
	ChannelID    string  `json:"channelId"`
	ServiceURL   string  `json:"serviceUrl"`
	ReplyToID    string  `json:"replyToId"`
	From         Account `json:"from"`
	Conversation struct {
		ID               string `json:"id"`
		TenantID         string `json:"tenantId"`
		ConversationType string `json:"conversationType"`
	} `json:"conversation"`
	// ChannelData carries the tenant too, where conversation does not.
	ChannelData struct {
		Tenant struct {
			ID string `json:"id"`
		} `json:"tenant"`
	} `json:"channelData"`
	Value json.RawMessage `json:"value"`
}

// Account is who sent an activity.
type Account struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	AADObjectID string `json:"aadObjectId"`
	// UserPrincipalName is sent by some clients only; an approval matches
	// it when it is there.
	UserPrincipalName string `json:"userPrincipalName"`
}

// Activity types and the invoke name of Action.Execute.
const (
	ActivityMessage  = "message"
	ActivityInvoke   = "invoke"
	InvokeCardAction = "adaptiveCard/action"
)

// Answer is a card answer an activity carries.
type Answer struct {
	// Execute is set for Action.Execute (an invoke that expects a card in
	// its response), clear for Action.Submit (a message activity).
	Execute bool
	// Token is the signed Ref from the action data.
	Token string
	// Data is the submitted data without the token: the action's data and
	// the card's inputs, and for Action.Execute its verb.
	Data map[string]any
}

// ParseAnswer reads the card answer of an activity. It returns nil for
// activities that answer no cardflow card (a chat message, a member
// joining), which the endpoint acknowledges and ignores.
func ParseAnswer(a *Activity) (*Answer, error) {
	var data map[string]any
	execute := false
	switch {
	case a.Type == ActivityInvoke && a.Name == InvokeCardAction:
		var v struct {
			Action struct {
				Type string         `json:"type"`
				Verb string         `json:"verb"`
				Data map[string]any `json:"data"`
			} `json:"action"`
		}
		if err := json.Unmarshal(a.Value, &v); err != nil {
			return nil, cardflow.Errorf(cardflow.EINVALID, "the adaptiveCard/action invoke's value is not {\"action\": {\"type\", \"verb\", \"data\": {...}}}")
		}
		data, execute = v.Action.Data, true
		if data == nil {
			data = map[string]any{}
		}
		if _, ok := data["verb"]; !ok && v.Action.Verb != "" {
			data["verb"] = v.Action.Verb
		}
	case a.Type == ActivityMessage && len(a.Value) > 0:
		if err := json.Unmarshal(a.Value, &data); err != nil {
			return nil, nil // a message whose value is no object is no card answer
		}
	default:
		return nil, nil
	}
	token, _ := data[DataKey].(string)
	if token == "" {
		if execute {
			return nil, cardflow.Errorf(cardflow.EINVALID, "the card action carries no %q data: it was not sent by this service", DataKey)
		}
		return nil, nil
	}
	delete(data, DataKey)
	return &Answer{Execute: execute, Token: token, Data: data}, nil
}

// VerifyActivity checks by its Authorization header that a request came
// through the Bot Connector and reads the activity in its body, with the
// card answer it carries, whose signed reference it checks (app's
// ActivityVerifier).
func (in *Integration) VerifyActivity(ctx context.Context, authorization string, body []byte) (*cardflow.BotActivity, error) {
	claims, err := in.Verify(ctx, authorization)
	if err != nil {
		return nil, err
	}
	// Activities carry many fields this endpoint does not read, so unknown
	// fields are fine here.
	var a Activity
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, cardflow.Errorf(cardflow.EINVALID, "the body is not a Bot Framework activity: %v", err)
	}
	// The token names the Bot Connector it came through; the activity must
	// not claim another, or a reply could go elsewhere.
	if claims.ServiceURL != "" && !strings.EqualFold(strings.TrimRight(claims.ServiceURL, "/"), strings.TrimRight(a.ServiceURL, "/")) {
		return nil, unauthorized("the activity's serviceUrl is not the token's")
	}
	if len(claims.Endorsements) > 0 && !slices.Contains(claims.Endorsements, a.ChannelID) {
		return nil, unauthorized("its signing key does not endorse channel %q", a.ChannelID)
	}
	ans, err := ParseAnswer(&a)
	if err != nil {
		return nil, err
	}
	tenant := a.Conversation.TenantID
	if tenant == "" {
		tenant = a.ChannelData.Tenant.ID
	}
	out := &cardflow.BotActivity{
		Type:             a.Type,
		Conversation:     cardflow.BotConversation{ServiceURL: a.ServiceURL, ConversationID: a.Conversation.ID, TenantID: tenant},
		ConversationKind: a.Conversation.ConversationType,
		ReplyToID:        a.ReplyToID,
	}
	if ans == nil {
		return out, nil
	}
	key, err := in.SigningKey(ctx)
	if err != nil {
		return nil, err
	}
	ref, err := VerifyAction(key, ans.Token)
	if err != nil {
		return nil, err
	}
	if err := ref.Offer.admits(ans.Data); err != nil {
		return nil, err
	}
	actor := a.From.AADObjectID
	if actor == "" {
		actor = a.From.ID
	}
	payload := ans.Data
	payload["responder"] = map[string]any{"id": a.From.ID, "name": a.From.Name, "aad_object_id": a.From.AADObjectID}
	out.Answer = &cardflow.CardAnswer{
		OrganizationID: ref.OrganizationID, ProcessID: ref.ProcessID, ExecutionID: ref.ExecutionID, Wait: ref.Wait,
		Actor: "teams:" + actor, Payload: payload, Identities: identities(a.From),
	}
	out.ReplyWithCard = ans.Execute
	return out, nil
}

// DecisionReply is the body answering an Action.Execute invoke: the
// decision card, which replaces the one clicked (app's CardReplier).
func (in *Integration) DecisionReply(o cardflow.CardOutcome) map[string]any {
	return map[string]any{"statusCode": 200, "type": ContentType, "value": DecisionCard(o)}
}

// ReplaceCard replaces the card of an activity the bot sent with the
// decision card, as an answer by Action.Submit (which, unlike
// Action.Execute, cannot replace it in its reply) needs (app's
// CardReplier).
func (in *Integration) ReplaceCard(ctx context.Context, conv cardflow.BotConversation, activityID string, o cardflow.CardOutcome) error {
	if in.connector == nil {
		return cardflow.Errorf(cardflow.EINVALID, "this deployment has no Teams bot")
	}
	return in.connector.Update(ctx, Conversation(conv), activityID, DecisionCard(o))
}

// identities are the ids of the person who sent an activity that an
// approval's approvers are matched against.
func identities(from Account) []string {
	var ids []string
	for _, id := range []string{from.AADObjectID, from.UserPrincipalName} {
		if id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}
