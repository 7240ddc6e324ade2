package teams

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Ref names the wait a card answers: the organization, the process id, the
// execution that holds it and the wait's sequence number. It travels inside
// cards, signed, so an answer arriving without an API key proves which
// organization's wait it is for.
type Ref struct {
	OrganizationID string `json:"o"`
	ProcessID      string `json:"p"`
	ExecutionID    string `json:"x"`
	Wait           int    `json:"w"`
	// Choice is what a response link answers (the button's data); empty in
	// action data, where the submitted data is the answer.
	Choice any `json:"c,omitempty"`
	// Title is the button's title, which a response link's confirmation
	// page shows; empty in action data.
	Title string `json:"t,omitempty"`
	// Expires is when a response link stops working (epoch seconds).
	Expires int64 `json:"e,omitempty"`
	// Offer is what an answer by the action whose data carries the
	// reference may hold; a reference in action data always has one.
	Offer *Offer `json:"a,omitempty"`
	// Who is the approver a personal response link answers as; empty in
	// the links of card steps, which answer as nobody in particular.
	Who string `json:"who,omitempty"`
}

// Purposes keep a token of one kind from being accepted as the other.
const (
	purposeAction  = "cardflow-teams-action"
	purposeLink    = "cardflow-teams-link"
	purposeConfirm = "cardflow-teams-confirm"
)

// maxChoiceBytes bounds a link's choice, so the URL stays short enough for
// every client.
const maxChoiceBytes = 512

// sign returns base64url(JSON of ref) "." base64url(HMAC-SHA256).
func sign(key []byte, purpose string, ref Ref) (string, error) {
	b, err := json.Marshal(ref)
	if err != nil {
		return "", err
	}
	payload := base64.RawURLEncoding.EncodeToString(b)
	return payload + "." + base64.RawURLEncoding.EncodeToString(mac(key, purpose, payload)), nil
}

func mac(key []byte, purpose, payload string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(purpose + "\n" + payload))
	return h.Sum(nil)
}

// verify checks a token's signature and expiry and returns its Ref. Its
// errors are EINVALID with a message for the person who clicked.
func verify(key []byte, purpose, token string, now time.Time) (*Ref, error) {
	what := "response link"
	if purpose == purposeAction {
		what = "card's response data"
	}
	payload, sig, ok := strings.Cut(token, ".")
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(got, mac(key, purpose, payload)) {
		return nil, cardflow.Errorf(cardflow.EINVALID, "this %s is not valid: it was changed or cut short", what)
	}
	b, err := base64.RawURLEncoding.DecodeString(payload)
	var ref Ref
	if err == nil {
		err = decodeRef(b, &ref, purpose == purposeLink)
	}
	if err != nil || ref.OrganizationID == "" || ref.ProcessID == "" || ref.Wait < 1 {
		return nil, cardflow.Errorf(cardflow.EINVALID, "this %s is not valid", what)
	}
	if ref.Expires != 0 && now.Unix() >= ref.Expires {
		return nil, cardflow.Errorf(cardflow.EINVALID, "this response link expired on %s", time.Unix(ref.Expires, 0).UTC().Format("2 Jan 2006 15:04 MST"))
	}
	return &ref, nil
}

// decodeRef reads a reference. A link's is read strictly: a field this
// version does not know makes the link invalid rather than silently
// ignored, so a link is never taken for less than it says (a version
// before personal links refuses one naming its approver).
func decodeRef(b []byte, ref *Ref, strict bool) error {
	if !strict {
		return json.Unmarshal(b, ref)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(ref); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data")
	}
	return nil
}

// SignAction returns the token a bot card carries in the data of one
// action: the reference and what an answer by that action may hold.
func SignAction(key []byte, ref Ref, offer Offer) (string, error) {
	// The bot vouches for who clicked: action data names nobody.
	ref.Choice, ref.Title, ref.Expires, ref.Offer, ref.Who = nil, "", 0, &offer, ""
	return sign(key, purposeAction, ref)
}

// VerifyAction checks a token from action data. A token without an offer,
// as cards posted before answers were bound to their actions carry, is not
// valid.
func VerifyAction(key []byte, token string) (*Ref, error) {
	ref, err := verify(key, purposeAction, token, time.Time{})
	if err != nil {
		return nil, err
	}
	if ref.Offer == nil {
		return nil, cardflow.Errorf(cardflow.EINVALID, "this card's response data is not valid: the card was sent by an earlier version of this service and can no longer be answered here")
	}
	return ref, nil
}

// SignLink returns the token of a response link, which expires.
func SignLink(key []byte, ref Ref) (string, error) {
	if b, _ := json.Marshal(ref.Choice); len(b) > maxChoiceBytes {
		return "", cardflow.Errorf(cardflow.EINVALID, "a button's data is %d bytes, more than the %d a response link can carry", len(b), maxChoiceBytes)
	}
	ref.Offer = nil
	return sign(key, purposeLink, ref)
}

// VerifyLink checks a response link's token at now.
func VerifyLink(key []byte, token string, now time.Time) (*Ref, error) {
	return verify(key, purposeLink, token, now)
}

// SignConfirmation returns the token a response link's confirmation form
// posts with the link's token. It is bound to that link, so it confirms no
// other, and only this service can make it, so the POST comes from the page
// a GET of the link showed. Using it once is enforced where the answer is
// recorded: the wait it answers is claimed in the same conditional write
// (see docs/DECISIONS.md).
func SignConfirmation(key []byte, linkToken string) string {
	return base64.RawURLEncoding.EncodeToString(mac(key, purposeConfirm, linkToken))
}

// VerifyConfirmation checks that confirmation is the token
// SignConfirmation gives for linkToken. Its error is EINVALID with a
// message for the person who clicked.
func VerifyConfirmation(key []byte, linkToken, confirmation string) error {
	got, err := base64.RawURLEncoding.DecodeString(confirmation)
	if err != nil || !hmac.Equal(got, mac(key, purposeConfirm, linkToken)) {
		return cardflow.Errorf(cardflow.EINVALID, "this confirmation is not valid: open the link again and confirm on its page")
	}
	return nil
}
