// Package saptest is a fake SAP Gateway OData service for tests: it enforces
// sap-client, basic or OAuth bearer auth and the CSRF token handshake with
// its session cookie, and answers with bodies and errors shaped as SAP's
// OData V2 and V4 services shape them.
package saptest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
)

// Service paths of the purchase order API.
const (
	ServiceV2 = "/sap/opu/odata/sap/API_PURCHASEORDER_PROCESS_SRV"
	ServiceV4 = "/sap/opu/odata4/sap/api_purchaseorder_2/srvd_a2x/sap/purchaseorder/0001"
	TokenPath = "/oauth/token"
)

// Config configures a Server.
type Config struct {
	// Version is "V2" (default) or "V4".
	Version string
	// Client is the only sap-client accepted (default "100").
	Client string
	// User and Password are the basic auth credentials; with ClientID and
	// ClientSecret set, only bearer tokens from TokenPath are accepted.
	User, Password         string
	ClientID, ClientSecret string
	// Echo makes errors repeat the request's Authorization header, as a
	// badly written proxy might, to test that callers keep it out of
	// their records.
	Echo bool
}

// Server is the fake.
type Server struct {
	*httptest.Server
	cfg Config

	mu        sync.Mutex
	orders    map[string]map[string]any
	sessions  map[string]string // session id -> CSRF token
	tokens    map[string]bool
	fetches   int
	calls     []string
	throttle  []throttle
	nextOrder int
}

type throttle struct {
	status     int
	retryAfter string
}

// New starts a fake with two purchase orders.
func New(cfg Config) *Server {
	if cfg.Version == "" {
		cfg.Version = "V2"
	}
	if cfg.Client == "" {
		cfg.Client = "100"
	}
	s := &Server{cfg: cfg, sessions: map[string]string{}, tokens: map[string]bool{}, nextOrder: 4500000003,
		orders: map[string]map[string]any{
			"4500000001": {"PurchaseOrder": "4500000001", "Supplier": "17300001", "PurchaseOrderType": "NB", "DocumentCurrency": "EUR"},
			"4500000002": {"PurchaseOrder": "4500000002", "Supplier": "17300002", "PurchaseOrderType": "NB", "DocumentCurrency": "USD"},
		}}
	s.Server = httptest.NewServer(s)
	return s
}

// Service is the service root path of the configured version.
func (s *Server) Service() string {
	if s.cfg.Version == "V4" {
		return ServiceV4
	}
	return ServiceV2
}

// Throttle answers the next calls with status (429 or 503) and a
// Retry-After value ("" for none), one per entry.
func (s *Server) Throttle(status int, retryAfter ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ra := range retryAfter {
		s.throttle = append(s.throttle, throttle{status, ra})
	}
}

// ExpireSessions ends every session, so their CSRF tokens are refused.
func (s *Server) ExpireSessions() {
	s.mu.Lock()
	s.sessions = map[string]string{}
	s.mu.Unlock()
}

// Fetches is the number of CSRF tokens handed out.
func (s *Server) Fetches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches
}

// Calls lists the calls received, "METHOD target status", the target as
// it was sent: the escaped path and the query.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// Order returns a stored purchase order.
func (s *Server) Order(id string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.orders[id]
}

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) { r.status = code; r.ResponseWriter.WriteHeader(code) }

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{ResponseWriter: w, status: 200}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serve(rec, r)
	s.calls = append(s.calls, fmt.Sprintf("%s %s %d", r.Method, r.RequestURI, rec.status))
}

func random() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == TokenPath {
		s.token(w, r)
		return
	}
	if len(s.throttle) > 0 {
		t := s.throttle[0]
		s.throttle = s.throttle[1:]
		if t.retryAfter != "" {
			w.Header().Set("Retry-After", t.retryAfter)
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(t.status)
		fmt.Fprint(w, "<html><body>Service is temporarily unavailable</body></html>")
		return
	}
	// The logon check comes first in SAP too: a wrong client is a failed
	// logon.
	if r.URL.Query().Get("sap-client") != s.cfg.Client {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "<html><body>Logon failed: client %q does not exist</body></html>", r.URL.Query().Get("sap-client"))
		return
	}
	if !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="SAP NetWeaver Application Server [S4H/`+s.cfg.Client+`]"`)
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusUnauthorized)
		msg := "Logon failed"
		if s.cfg.Echo {
			msg += ": " + r.Header.Get("Authorization")
		}
		fmt.Fprintf(w, "<html><body>%s</body></html>", msg)
		return
	}
	service := s.Service()
	if !strings.HasPrefix(r.URL.Path, service+"/") {
		s.odataError(w, http.StatusNotFound, "/IWFND/MED/170", "No service found for namespace '', name '"+strings.TrimPrefix(r.URL.Path, "/")+"'", nil)
		return
	}
	entity := strings.TrimPrefix(r.URL.Path, service+"/")

	if r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("X-Csrf-Token"), "Fetch") {
		s.fetches++
		sid, tok := random(), random()
		s.sessions[sid] = tok
		http.SetCookie(w, &http.Cookie{Name: "SAP_SESSIONID_S4H_" + s.cfg.Client, Value: sid, Path: "/", HttpOnly: true})
		http.SetCookie(w, &http.Cookie{Name: "sap-usercontext", Value: "sap-client=" + s.cfg.Client, Path: "/"})
		w.Header().Set("X-Csrf-Token", tok)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		c, err := r.Cookie("SAP_SESSIONID_S4H_" + s.cfg.Client)
		tok := r.Header.Get("X-Csrf-Token")
		if err != nil || tok == "" || s.sessions[c.Value] != tok {
			w.Header().Set("X-Csrf-Token", "Required")
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, "CSRF token validation failed")
			return
		}
	}

	const set = "A_PurchaseOrder"
	switch {
	case entity == "":
		s.json(w, http.StatusOK, s.envelope(map[string]any{"EntitySets": []any{set}}, false))
	case entity == set && r.Method == http.MethodGet:
		var list []any
		ids := make([]string, 0, len(s.orders))
		for id := range s.orders {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			o := s.orders[id]
			if f := r.URL.Query().Get("$filter"); f != "" && !matches(o, f) {
				continue
			}
			list = append(list, s.entity(o))
		}
		s.json(w, http.StatusOK, s.envelope(list, true))
	case entity == set && r.Method == http.MethodPost:
		var in map[string]any
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			s.odataError(w, http.StatusBadRequest, "/IWBEP/CX_MGW_TECH_EXCEPTION", "The request body is not JSON", nil)
			return
		}
		if in["Supplier"] == nil {
			s.odataError(w, http.StatusBadRequest, "ME/083", "Enter a supplier",
				[][2]string{{"ME/083", "Enter a supplier"}, {"06/298", "Purchase order still contains faulty items"}})
			return
		}
		id := fmt.Sprint(s.nextOrder)
		s.nextOrder++
		in["PurchaseOrder"] = id
		s.orders[id] = in
		s.json(w, http.StatusCreated, s.envelope(s.entity(in), false))
	default:
		id, ok := key(entity, set)
		if !ok {
			s.odataError(w, http.StatusNotFound, "/IWBEP/CM_MGW_RT/021", "Resource not found for segment '"+entity+"'", nil)
			return
		}
		o := s.orders[id]
		if o == nil {
			s.odataError(w, http.StatusNotFound, "ME/006", "Purchase order "+id+" does not exist",
				[][2]string{{"ME/006", "Purchase order " + id + " does not exist"}, {"/IWBEP/CX_MGW_BUSI_EXCEPTION", "Check the purchase order number"}})
			return
		}
		switch r.Method {
		case http.MethodGet:
			s.json(w, http.StatusOK, s.envelope(s.entity(o), false))
		case http.MethodPatch, http.MethodPut, "MERGE":
			var in map[string]any
			_ = json.NewDecoder(r.Body).Decode(&in) // a body that is no JSON changes nothing
			for k, v := range in {
				o[k] = v
			}
			w.WriteHeader(http.StatusNoContent)
		case http.MethodDelete:
			delete(s.orders, id)
			w.WriteHeader(http.StatusNoContent)
		default:
			s.odataError(w, http.StatusMethodNotAllowed, "/IWBEP/CM_MGW_RT/004", "Method "+r.Method+" not allowed", nil)
		}
	}
}

// matches understands "Field eq 'value'".
func matches(o map[string]any, filter string) bool {
	f, v, ok := strings.Cut(filter, " eq ")
	if !ok {
		return true
	}
	return fmt.Sprint(o[strings.TrimSpace(f)]) == strings.Trim(strings.TrimSpace(v), "'")
}

// key reads A_PurchaseOrder('4500000001'), A_PurchaseOrder(4500000001) and
// A_PurchaseOrder(PurchaseOrder='4500000001') from an unescaped path; in a
// quoted key a doubled quote stands for one, as in OData.
func key(entity, set string) (string, bool) {
	rest, ok := strings.CutPrefix(entity, set+"(")
	if !ok || !strings.HasSuffix(rest, ")") {
		return "", false
	}
	rest = strings.TrimSuffix(rest, ")")
	rest = strings.TrimPrefix(rest, "PurchaseOrder=")
	if len(rest) >= 2 && rest[0] == '\'' && rest[len(rest)-1] == '\'' {
		return strings.ReplaceAll(rest[1:len(rest)-1], "''", "'"), true
	}
	return rest, true
}

func (s *Server) entity(o map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range o {
		out[k] = v
	}
	if s.cfg.Version == "V2" {
		out["__metadata"] = map[string]any{"id": s.URL + ServiceV2 + "/A_PurchaseOrder('" + fmt.Sprint(o["PurchaseOrder"]) + "')", "type": "API_PURCHASEORDER_PROCESS_SRV.A_PurchaseOrderType"}
	}
	return out
}

// envelope wraps a body as the version does: V2 {"d": ...} or
// {"d": {"results": [...]}}, V4 {"@odata.context", "value": [...]} or the
// entity with its context.
func (s *Server) envelope(v any, collection bool) any {
	if s.cfg.Version == "V2" {
		if collection {
			if v == nil {
				v = []any{}
			}
			return map[string]any{"d": map[string]any{"results": v}}
		}
		return map[string]any{"d": v}
	}
	ctx := s.URL + ServiceV4 + "/$metadata#PurchaseOrder"
	if collection {
		if v == nil {
			v = []any{}
		}
		return map[string]any{"@odata.context": ctx, "@odata.metadataEtag": `W/"20261102090000"`, "value": v}
	}
	m, _ := v.(map[string]any)
	out := map[string]any{"@odata.context": ctx + "/$entity"}
	for k, val := range m {
		out[k] = val
	}
	return out
}

func (s *Server) json(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if s.cfg.Version == "V2" {
		w.Header().Set("Dataserviceversion", "2.0")
	} else {
		w.Header().Set("Odata-Version", "4.0")
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// odataError answers an error the way the version shapes it.
func (s *Server) odataError(w http.ResponseWriter, status int, code, msg string, details [][2]string) {
	var body map[string]any
	if s.cfg.Version == "V2" {
		var ds []any
		for _, d := range details {
			ds = append(ds, map[string]any{"code": d[0], "message": d[1], "propertyref": "", "severity": "error", "target": ""})
		}
		body = map[string]any{"error": map[string]any{
			"code":    code,
			"message": map[string]any{"lang": "en", "value": msg},
			"innererror": map[string]any{
				"application":   map[string]any{"component_id": "MM-PUR-PO", "service_namespace": "/SAP/", "service_id": "API_PURCHASEORDER_PROCESS_SRV", "service_version": "0001"},
				"transactionid": "4F3B9C2A1E7D00A1E0063B4A0A1E8C31", "timestamp": "20261102090000.1234560",
				"errordetails": ds,
			},
		}}
	} else {
		var ds []any
		for _, d := range details {
			ds = append(ds, map[string]any{"code": d[0], "message": d[1], "target": "PurchaseOrder", "@Common.numericSeverity": 4})
		}
		body = map[string]any{"error": map[string]any{"code": code, "message": msg, "details": ds,
			"innererror": map[string]any{"ErrorDetails": map[string]any{"@Common.transactionId": "4F3B9C2A1E7D00A1E0063B4A0A1E8C31"}}}}
	}
	s.json(w, status, body)
}

func (s *Server) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	if s.cfg.ClientID != "" {
		tok, ok := strings.CutPrefix(h, "Bearer ")
		return ok && s.tokens[tok]
	}
	u, p, ok := r.BasicAuth()
	return ok && u == s.cfg.User && p == s.cfg.Password
}

// token is the client credentials grant of an OAuth server.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	id, secret, ok := r.BasicAuth()
	if r.Method != http.MethodPost || r.ParseForm() != nil || r.PostForm.Get("grant_type") != "client_credentials" {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":"unsupported_grant_type","error_description":"only client_credentials is supported"}`)
		return
	}
	if !ok || id != s.cfg.ClientID || secret != s.cfg.ClientSecret {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":"invalid_client","error_description":"Bad credentials"}`)
		return
	}
	tok := random()
	s.tokens[tok] = true
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "bearer", "expires_in": 43199, "scope": r.PostForm.Get("scope")})
}
