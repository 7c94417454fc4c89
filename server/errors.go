package server

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// apiErr is an error answered to the client: an HTTP status, Azure's error
// code and a message.
type apiErr struct {
	status int
	code   edm.Code
	msg    string
}

func (e *apiErr) Error() string { return "tablestore: server: " + string(e.code) + ": " + e.msg }

func apiError(status int, code edm.Code, msg string) *apiErr {
	return &apiErr{status: status, code: code, msg: msg}
}

// codeStatus maps every error code the server answers to its HTTP status.
// tablestore's codes come first; then the codes only the server produces.
var codeStatus = map[edm.Code]int{
	edm.CodeTableAlreadyExists:                      http.StatusConflict,
	edm.CodeTableNotFound:                           http.StatusNotFound,
	edm.CodeResourceNotFound:                        http.StatusNotFound,
	edm.CodeEntityAlreadyExists:                     http.StatusConflict,
	edm.CodeUpdateConditionNotSatisfied:             http.StatusPreconditionFailed,
	edm.CodePropertiesNeedValue:                     http.StatusBadRequest,
	edm.CodeInvalidInput:                            http.StatusBadRequest,
	edm.CodeOutOfRangeInput:                         http.StatusBadRequest,
	edm.CodeInvalidResourceName:                     http.StatusBadRequest,
	edm.CodePropertyValueTooLarge:                   http.StatusBadRequest,
	edm.CodeEntityTooLarge:                          http.StatusBadRequest,
	edm.CodeTooManyProperties:                       http.StatusBadRequest,
	edm.CodeKeyValueTooLarge:                        http.StatusBadRequest,
	edm.CodePropertyNameInvalid:                     http.StatusBadRequest,
	edm.CodePropertyNameTooLong:                     http.StatusBadRequest,
	edm.CodeDuplicatePropertiesSpecified:            http.StatusBadRequest,
	edm.CodeInvalidValueType:                        http.StatusBadRequest,
	edm.CodeInvalidDuplicateRow:                     http.StatusBadRequest,
	edm.CodeCommandsInBatchActOnDifferentPartitions: http.StatusBadRequest,
	// Azure answers 501 for filter features it lacks; azcore does not
	// retry 501, and the answer is deterministic.
	edm.CodeNotImplemented:      http.StatusNotImplemented,
	edm.CodeRequestBodyTooLarge: http.StatusRequestEntityTooLarge,

	edm.CodeInvalidXMLDocument:                 http.StatusBadRequest,
	edm.CodeInvalidURI:                         http.StatusBadRequest,
	edm.CodeInvalidHeaderValue:                 http.StatusBadRequest,
	edm.CodeInvalidQueryParameterValue:         http.StatusBadRequest,
	edm.CodeXMethodNotUsingPost:                http.StatusBadRequest,
	edm.CodeXMethodIncorrectValue:              http.StatusBadRequest,
	edm.CodeXMethodIncorrectCount:              http.StatusBadRequest,
	edm.CodeMethodNotAllowed:                   http.StatusMethodNotAllowed,
	edm.CodeJSONFormatNotSupported:             http.StatusUnsupportedMediaType,
	edm.CodeAtomFormatNotSupported:             http.StatusUnsupportedMediaType,
	edm.CodeAuthenticationFailed:               http.StatusForbidden,
	edm.CodeAuthorizationPermissionMismatch:    http.StatusForbidden,
	edm.CodeAuthorizationResourceTypeMismatch:  http.StatusForbidden,
	edm.CodeAuthorizationServiceMismatch:       http.StatusForbidden,
	edm.CodeAuthorizationSourceIPMismatch:      http.StatusForbidden,
	edm.CodeAuthorizationProtocolMismatch:      http.StatusForbidden,
	edm.CodeRequestHeaderFieldsTooLarge:        http.StatusRequestHeaderFieldsTooLarge,
	edm.CodeServerBusy:                         http.StatusServiceUnavailable,
	edm.CodeInternalError:                      http.StatusInternalServerError,
	edm.CodeOperationTimedOut:                  http.StatusInternalServerError,
	edm.CodeUnsupportedHTTPVerb:                http.StatusMethodNotAllowed,
	edm.CodeInvalidBatchRequest:                http.StatusBadRequest,
	edm.CodeMissingRequiredHeader:              http.StatusBadRequest,
	edm.CodeResourceTypeMismatch:               http.StatusBadRequest,
	edm.CodeUnsupportedQueryParameter:          http.StatusBadRequest,
	edm.CodeOperationNotAllowedOnCurrentTarget: http.StatusBadRequest,
}

// azureMessages holds Azure's own message text for the codes whose text
// clients and tests have been seen to rely on; other codes keep the
// library's more specific message.
var azureMessages = map[edm.Code]string{
	edm.CodeTableAlreadyExists:                      "The table specified already exists.",
	edm.CodeTableNotFound:                           "The table specified does not exist.",
	edm.CodeResourceNotFound:                        "The specified resource does not exist.",
	edm.CodeEntityAlreadyExists:                     "The specified entity already exists.",
	edm.CodeUpdateConditionNotSatisfied:             "The update condition specified in the request was not satisfied.",
	edm.CodePropertiesNeedValue:                     "The values are not specified for all properties in the entity.",
	edm.CodeInvalidDuplicateRow:                     "The batch request contains multiple changes with same row key. An entity can appear only once in a batch request.",
	edm.CodeCommandsInBatchActOnDifferentPartitions: "All commands in a batch must operate on same entity group.",
	// The store's own faults (closed, corrupt, I/O) keep their details,
	// such as file paths, on the server.
	edm.CodeInternalError:     "The server encountered an internal error. Please retry the request.",
	edm.CodeServerBusy:        "The server is busy; retry the request.",
	edm.CodeOperationTimedOut: "The operation could not be completed within the permitted time.",
}

var (
	errInternal              = apiError(http.StatusInternalServerError, edm.CodeInternalError, "The server encountered an internal error. Please retry the request.")
	errServerBusy            = apiError(http.StatusServiceUnavailable, edm.CodeServerBusy, "The server is busy; retry the request.")
	errNoSpace               = apiError(http.StatusServiceUnavailable, edm.CodeServerBusy, "The server's disk is full: writes are refused until space is freed; reads go on. Retry the request later.")
	errAppliedBackupStopped  = apiError(http.StatusInternalServerError, edm.CodeInternalError, "The write is applied, but the server's continuous backup has stopped: do not retry it. Writes are refused until the server is restarted.")
	errBackupStopped         = apiError(http.StatusInternalServerError, edm.CodeInternalError, "The server's continuous backup has stopped: writes are refused until the server is restarted.")
	errBodyTooLarge          = apiError(http.StatusRequestEntityTooLarge, edm.CodeRequestBodyTooLarge, "The request body is too large and exceeds the maximum permissible limit.")
	errHeadersTooLarge       = apiError(http.StatusRequestHeaderFieldsTooLarge, edm.CodeRequestHeaderFieldsTooLarge, "The request headers are too large.")
	errXMethodNotUsingPost   = apiError(http.StatusBadRequest, edm.CodeXMethodNotUsingPost, "The HTTP method specified by the X-HTTP-Method header must be used with POST.")
	errXMethodIncorrectValue = apiError(http.StatusBadRequest, edm.CodeXMethodIncorrectValue, "The X-HTTP-Method header value must be MERGE, PATCH, PUT or DELETE.")
	errXMethodIncorrectCount = apiError(http.StatusBadRequest, edm.CodeXMethodIncorrectCount, "More than one X-HTTP-Method header was specified.")
	errMethodNotAllowed      = apiError(http.StatusMethodNotAllowed, edm.CodeMethodNotAllowed, "The requested method is not allowed on the specified resource.")
	errInvalidURI            = apiError(http.StatusBadRequest, edm.CodeInvalidURI, "The requested URI does not represent any resource on the server.")
	errAuthFailed            = apiError(http.StatusForbidden, edm.CodeAuthenticationFailed, "Server failed to authenticate the request. Make sure the value of the Authorization header is formed correctly including the signature.")
	errPermission            = apiError(http.StatusForbidden, edm.CodeAuthorizationPermissionMismatch, "This request is not authorized to perform this operation using this permission.")
	errResourceType          = apiError(http.StatusForbidden, edm.CodeAuthorizationResourceTypeMismatch, "This request is not authorized to perform this operation using this resource type.")
)

// toAPIError turns any error into what the client is told. A full disk
// (ErrNoSpace) and a closed store (ErrClosed: the server is shutting
// down) are both 503 ServerBusy, which clients retry.
func toAPIError(err error) *apiErr {
	var ae *apiErr
	if errors.As(err, &ae) {
		return ae
	}
	switch {
	case errors.Is(err, tablestore.ErrAppliedBackupStopped):
		return errAppliedBackupStopped
	case errors.Is(err, tablestore.ErrBackupStopped):
		return errBackupStopped
	case errors.Is(err, tablestore.ErrNoSpace):
		return errNoSpace
	case errors.Is(err, tablestore.ErrClosed):
		return errServerBusy
	}
	var te *tablestore.Error
	if errors.As(err, &te) {
		return fromLibrary(te)
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apiError(http.StatusInternalServerError, edm.CodeOperationTimedOut, "The operation could not be completed within the permitted time.")
	}
	return errInternal
}

// fromLibrary maps a library error to its status; Azure's message text
// where clients know it, else the library's message.
func fromLibrary(e *tablestore.Error) *apiErr {
	code := e.Code
	status, ok := codeStatus[code]
	if !ok {
		status = http.StatusBadRequest
	}
	msg := azureMessages[code]
	if msg == "" {
		msg = e.Message
	}
	return apiError(status, code, msg)
}

// answer answers a request whose handler returned err; nil: the handler
// wrote the response. A batch operation's failure (opFailure) is a 202
// batch response; any other error is written as JSON (odata.error) or,
// for the ACL and service operations, XML, both with x-ms-error-code.
// Handlers return errors and only answer writes them.
func (q *request) answer(err error) {
	if err == nil {
		return
	}
	if f, ok := err.(*opFailure); ok {
		if !q.cosmosFailure(f) { // cosmos_wire.go
			q.answerFailure(f)
		}
		return
	}
	ae := q.failed(toAPIError(err)) // ops.go: the log's reason; Azure's message for auth failures
	if q.cosmosAnswer(ae) {         // cosmos_wire.go: Cosmos DB's error shape
		return
	}
	hd := q.w.Header()
	hd.Set("x-ms-error-code", string(ae.code))
	if ae.status == http.StatusServiceUnavailable {
		hd.Set("Retry-After", "1")
	}
	if !q.bodyDone && q.r.ContentLength != 0 {
		// The body was not read: close the connection rather than
		// wait for a body nobody needs.
		hd.Set("Connection", "close")
	}
	msg := ae.msg + "\nRequestId:" + q.id + "\nTime:" + edm.FormatDateTimeJSON(q.h.now())
	if q.xml {
		hd.Set("Content-Type", "application/xml")
		var b strings.Builder
		b.WriteString(xmlDeclaration + `<m:error xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"><m:code>`)
		_ = xml.EscapeText(&b, []byte(ae.code))
		b.WriteString(`</m:code><m:message xml:lang="en-US">`)
		_ = xml.EscapeText(&b, []byte(msg))
		b.WriteString(`</m:message></m:error>`)
		q.w.WriteHeader(ae.status)
		_, _ = q.w.Write([]byte(b.String()))
		return
	}
	body := errorJSON(ae.code, msg)
	hd.Set("Content-Type", contentType(tablestore.MinimalMetadata))
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	q.w.WriteHeader(ae.status)
	if q.r.Method != http.MethodHead {
		_, _ = q.w.Write(body)
	}
}

// errorJSON is Azure's one-line JSON error body.
func errorJSON(code edm.Code, msg string) []byte {
	type message struct {
		Lang  string `json:"lang"`
		Value string `json:"value"`
	}
	type odataError struct {
		Code    string  `json:"code"`
		Message message `json:"message"`
	}
	b, _ := json.Marshal(map[string]odataError{"odata.error": {Code: string(code), Message: message{Lang: "en-US", Value: msg}}})
	return b
}

// as is errors.As, named for brevity at call sites with many returns.
func as(err error, target any) bool { return errors.As(err, target) }
