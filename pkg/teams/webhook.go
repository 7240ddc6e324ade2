package teams

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/outbound"
)

// maxReplyBytes bounds the reply bodies read from Teams and its token
// endpoint.
const maxReplyBytes = 64 << 10

// Envelope is the message a Teams Workflows webhook ("When a Teams webhook
// request is received") takes: one adaptive card attachment.
func Envelope(card map[string]any) map[string]any {
	return map[string]any{
		"type": "message",
		"attachments": []any{map[string]any{
			"contentType": ContentType,
			"contentUrl":  nil,
			"content":     card,
		}},
	}
}

// Webhook posts cards to Teams Workflows webhooks.
type Webhook struct {
	client *http.Client
}

// NewWebhook returns a webhook client that sends through client.
func NewWebhook(client *http.Client) (*Webhook, error) {
	if client == nil {
		return nil, errors.New("teams: the webhook needs an HTTP client")
	}
	return &Webhook{client: client}, nil
}

// Post sends card to the webhook at target. The URL is a credential (its
// query carries the flow's signature): no error names it. A refusal
// (a 4xx other than 429) is EINVALID, since sending again cannot help;
// other failures are plain errors worth a retry.
func (w *Webhook) Post(ctx context.Context, target string, card map[string]any) error {
	u, err := url.Parse(strings.TrimSpace(target))
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return cardflow.Errorf(cardflow.EINVALID, "the webhook secret does not hold an https URL")
	}
	status, body, err := postJSON(ctx, w.client, u.String(), nil, Envelope(card))
	if err != nil {
		return fmt.Errorf("Teams webhook at %s: %w", u.Host, err)
	}
	return replyError("the Teams webhook", status, body)
}

// postJSON posts v as JSON and returns the status and (bounded) reply. Its
// errors leave the URL out.
func postJSON(ctx context.Context, client *http.Client, target string, header http.Header, v any) (int, []byte, error) {
	return send(ctx, client, http.MethodPost, target, header, v)
}

func send(ctx context.Context, client *http.Client, method, target string, header http.Header, v any) (int, []byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(b))
	if err != nil {
		return 0, nil, errors.New("cannot build the request")
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	return do(client, req)
}

// do sends req and reads the reply, keeping the URL out of errors, and
// the addresses a name resolved to (outbound.Reason).
func do(client *http.Client, req *http.Request) (int, []byte, error) {
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, errors.New(outbound.Reason(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes))
	if err != nil {
		return 0, nil, fmt.Errorf("reading the reply: %w", err)
	}
	return resp.StatusCode, body, nil
}

// replyError turns a reply status into an error: nil for 2xx, EINVALID for a
// refusal, a plain error (retry) for throttling and server faults.
func replyError(who string, status int, body []byte) error {
	switch {
	case status >= 200 && status < 300:
		return nil
	case status == http.StatusTooManyRequests || status >= 500:
		return fmt.Errorf("%s answered %d %s%s", who, status, http.StatusText(status), detail(body))
	}
	return cardflow.Errorf(cardflow.EINVALID, "%s refused the request: %d %s%s", who, status, http.StatusText(status), detail(body))
}

// detail picks a short readable message out of an error reply: Bot
// Connector's and Power Automate's error.message, or OAuth's
// error_description.
func detail(body []byte) string {
	var r struct {
		Error any    `json:"error"`
		Desc  string `json:"error_description"`
	}
	if json.Unmarshal(body, &r) != nil {
		return ""
	}
	msg := r.Desc
	if e, ok := r.Error.(map[string]any); ok {
		msg, _ = e["message"].(string)
	} else if s, ok := r.Error.(string); ok && msg == "" {
		msg = s
	}
	msg = strings.TrimSpace(msg)
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	if msg == "" {
		return ""
	}
	return ": " + msg
}
