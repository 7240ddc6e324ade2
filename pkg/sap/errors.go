package sap

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
)

// Error is an OData error answer, in words a person can act on.
type Error struct {
	Method, URL string
	Status      int
	Code        string
	Message     string
	// Target is the property the message is about, when SAP names one.
	Target  string
	Details []string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: SAP answered %d %s", e.Method, redactQuery(e.URL), e.Status, http.StatusText(e.Status))
	if e.Target != "" {
		b.WriteString(": " + e.Target)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Code != "" {
		b.WriteString(" (" + e.Code + ")")
	}
	if len(e.Details) > 0 {
		b.WriteString("; details: " + strings.Join(e.Details, "; "))
	}
	return b.String()
}

// odataError reads the error body: V2's error.message.value with
// innererror.errordetails, V4's error.message with details, V2's XML, or a
// short text.
func (c *Client) odataError(method, url string, r *Response) *Error {
	e := &Error{Method: method, URL: url, Status: r.Status}
	switch body := r.Body.(type) {
	case map[string]any:
		oe, _ := body["error"].(map[string]any)
		if oe == nil {
			break
		}
		e.Code, _ = oe["code"].(string)
		e.Message = messageOf(oe["message"])
		// CAP names the property at fault; "/#TRANSIENT#" and the like
		// name nothing a person can change.
		if t, _ := oe["target"].(string); !strings.ContainsAny(t, "/#") {
			e.Target = t
		}
		var details []any
		if inner, ok := oe["innererror"].(map[string]any); ok {
			details, _ = inner["errordetails"].([]any)
		}
		if d, ok := oe["details"].([]any); ok {
			details = append(details, d...)
		}
		for _, d := range details {
			dm, _ := d.(map[string]any)
			msg := messageOf(dm["message"])
			if msg == "" || msg == e.Message {
				continue
			}
			if code, _ := dm["code"].(string); code != "" {
				msg += " (" + code + ")"
			}
			if target, _ := dm["target"].(string); target != "" {
				msg = target + ": " + msg
			}
			e.Details = append(e.Details, msg)
		}
	case string:
		if x := xmlError(body); x != nil {
			e.Code, e.Message, e.Details = x.Code, x.Message, x.details()
		} else if s := strings.TrimSpace(body); s != "" && len(s) <= 200 && !strings.HasPrefix(s, "<") {
			e.Message = s
		}
	}
	return e
}

// messageOf reads V2's {"lang", "value"} or V4's plain string.
func messageOf(v any) string {
	switch m := v.(type) {
	case string:
		return m
	case map[string]any:
		s, _ := m["value"].(string)
		return s
	}
	return ""
}

type xmlODataError struct {
	XMLName xml.Name `xml:"error"`
	Code    string   `xml:"code"`
	Message string   `xml:"message"`
	Inner   struct {
		Details []struct {
			Code    string `xml:"code"`
			Message string `xml:"message"`
		} `xml:"errordetails>errordetail"`
	} `xml:"innererror"`
}

func (x *xmlODataError) details() []string {
	var out []string
	for _, d := range x.Inner.Details {
		if d.Message != "" && d.Message != x.Message {
			out = append(out, d.Message+" ("+d.Code+")")
		}
	}
	return out
}

// xmlError parses an OData V2 XML error body, which Gateway sends when the
// request did not ask for JSON early enough (e.g. a failed CSRF check).
func xmlError(s string) *xmlODataError {
	if !strings.Contains(s, "<error") {
		return nil
	}
	var x xmlODataError
	if err := xml.Unmarshal([]byte(s), &x); err != nil || (x.Message == "" && x.Code == "") {
		return nil
	}
	return &x
}
