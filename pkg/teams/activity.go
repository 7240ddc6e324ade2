package teams

import (
	"encoding/json"

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
		ID       string `json:"id"`
		TenantID string `json:"tenantId"`
	} `json:"conversation"`
	Value json.RawMessage `json:"value"`
}

// Account is who sent an activity.
type Account struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	AADObjectID string `json:"aadObjectId"`
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

// InvokeResponse is the body answering an Action.Execute invoke: a card
// that replaces the one clicked.
func InvokeResponse(card map[string]any) map[string]any {
	return map[string]any{"statusCode": 200, "type": ContentType, "value": card}
}
