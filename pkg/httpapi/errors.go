package httpapi

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// statusByCode is the one table from error codes to HTTP statuses.
var statusByCode = map[string]int{
	cardflow.EINVALID:      http.StatusBadRequest,
	cardflow.EUNAUTHORIZED: http.StatusUnauthorized,
	cardflow.EFORBIDDEN:    http.StatusForbidden,
	cardflow.ENOTFOUND:     http.StatusNotFound,
	cardflow.EMETHOD:       http.StatusMethodNotAllowed,
	cardflow.ECONFLICT:     http.StatusConflict,
	cardflow.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	cardflow.ETHROTTLED:    http.StatusTooManyRequests,
	cardflow.EINTERNAL:     http.StatusInternalServerError,
	cardflow.EUNAVAILABLE:  http.StatusServiceUnavailable,
}

// StatusOf returns the HTTP status of err.
func StatusOf(err error) int {
	if s, ok := statusByCode[cardflow.ErrorCode(err)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

type errorBody struct {
	Message string `json:"message"`
	Code    string `json:"code"`
}

// writeError answers with the error shape. Internal errors are logged with
// their details and answered with a generic message.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := cardflow.ErrorCode(err)
	status := StatusOf(err)
	if status >= 500 {
		s.log.ErrorContext(r.Context(), "request failed", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("code", code), slog.Any("error", err))
	}
	if d := cardflow.RetryAfterOf(err); d > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
	}
	writeJSON(w, status, errorBody{Message: cardflow.ErrorMessage(err), Code: code})
}
