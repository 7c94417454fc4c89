package server

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
)

// apiErr is an error answered to the client: an HTTP status, Azure's error
// code and a message.
type apiErr struct {
	status int
	code   string
	msg    string
}

func (e *apiErr) Error() string { return "tablestore: server: " + e.code + ": " + e.msg }

func apiError(status int, code, msg string) *apiErr {
	return &apiErr{status: status, code: code, msg: msg}
}

// codeStatus maps every error code the server answers to its HTTP status.
// tablestore's codes come first; then the codes only the server produces.
var codeStatus = map[string]int{
	string(tablestore.CodeTableAlreadyExists):                      http.StatusConflict,
	string(tablestore.CodeTableNotFound):                           http.StatusNotFound,
	string(tablestore.CodeResourceNotFound):                        http.StatusNotFound,
	string(tablestore.CodeEntityAlreadyExists):                     http.StatusConflict,
	string(tablestore.CodeUpdateConditionNotSatisfied):             http.StatusPreconditionFailed,
	string(tablestore.CodePropertiesNeedValue):                     http.StatusBadRequest,
	string(tablestore.CodeInvalidInput):                            http.StatusBadRequest,
	string(tablestore.CodeOutOfRangeInput):                         http.StatusBadRequest,
	string(tablestore.CodeInvalidResourceName):                     http.StatusBadRequest,
	string(tablestore.CodePropertyValueTooLarge):                   http.StatusBadRequest,
	string(tablestore.CodeEntityTooLarge):                          http.StatusBadRequest,
	string(tablestore.CodeTooManyProperties):                       http.StatusBadRequest,
	string(tablestore.CodeKeyValueTooLarge):                        http.StatusBadRequest,
	string(tablestore.CodePropertyNameInvalid):                     http.StatusBadRequest,
	string(tablestore.CodePropertyNameTooLong):                     http.StatusBadRequest,
	string(tablestore.CodeDuplicatePropertiesSpecified):            http.StatusBadRequest,
	string(tablestore.CodeInvalidValueType):                        http.StatusBadRequest,
	string(tablestore.CodeInvalidDuplicateRow):                     http.StatusBadRequest,
	string(tablestore.CodeCommandsInBatchActOnDifferentPartitions): http.StatusBadRequest,
	// Azure answers 501 for filter features it lacks; azcore does not
	// retry 501, and the answer is deterministic.
	string(tablestore.CodeNotImplemented):      http.StatusNotImplemented,
	string(tablestore.CodeRequestBodyTooLarge): http.StatusRequestEntityTooLarge,

	"InvalidXmlDocument":                 http.StatusBadRequest,
	"InvalidUri":                         http.StatusBadRequest,
	"InvalidHeaderValue":                 http.StatusBadRequest,
	"InvalidQueryParameterValue":         http.StatusBadRequest,
	"XMethodNotUsingPost":                http.StatusBadRequest,
	"XMethodIncorrectValue":              http.StatusBadRequest,
	"XMethodIncorrectCount":              http.StatusBadRequest,
	"MethodNotAllowed":                   http.StatusMethodNotAllowed,
	"JsonFormatNotSupported":             http.StatusUnsupportedMediaType,
	"AtomFormatNotSupported":             http.StatusUnsupportedMediaType,
	"AuthenticationFailed":               http.StatusForbidden,
	"AuthorizationPermissionMismatch":    http.StatusForbidden,
	"AuthorizationResourceTypeMismatch":  http.StatusForbidden,
	"AuthorizationServiceMismatch":       http.StatusForbidden,
	"AuthorizationSourceIPMismatch":      http.StatusForbidden,
	"AuthorizationProtocolMismatch":      http.StatusForbidden,
	"RequestHeaderFieldsTooLarge":        http.StatusRequestHeaderFieldsTooLarge,
	"ServerBusy":                         http.StatusServiceUnavailable,
	"InternalError":                      http.StatusInternalServerError,
	"OperationTimedOut":                  http.StatusInternalServerError,
	"UnsupportedHttpVerb":                http.StatusMethodNotAllowed,
	"InvalidBatchRequest":                http.StatusBadRequest,
	"MissingRequiredHeader":              http.StatusBadRequest,
	"ResourceTypeMismatch":               http.StatusBadRequest,
	"UnsupportedQueryParameter":          http.StatusBadRequest,
	"OperationNotAllowedOnCurrentTarget": http.StatusBadRequest,
}

// azureMessages holds Azure's own message text for the codes whose text
// clients and tests have been seen to rely on; other codes keep the
// library's more specific message.
var azureMessages = map[string]string{
	string(tablestore.CodeTableAlreadyExists):                      "The table specified already exists.",
	string(tablestore.CodeTableNotFound):                           "The table specified does not exist.",
	string(tablestore.CodeResourceNotFound):                        "The specified resource does not exist.",
	string(tablestore.CodeEntityAlreadyExists):                     "The specified entity already exists.",
	string(tablestore.CodeUpdateConditionNotSatisfied):             "The update condition specified in the request was not satisfied.",
	string(tablestore.CodePropertiesNeedValue):                     "The values are not specified for all properties in the entity.",
	string(tablestore.CodeInvalidDuplicateRow):                     "The batch request contains multiple changes with same row key. An entity can appear only once in a batch request.",
	string(tablestore.CodeCommandsInBatchActOnDifferentPartitions): "All commands in a batch must operate on same entity group.",
	// The store's own faults (closed, corrupt, I/O) keep their details,
	// such as file paths, on the server.
	string(tablestore.CodeInternalError):     "The server encountered an internal error. Please retry the request.",
	string(tablestore.CodeServerBusy):        "The server is busy; retry the request.",
	string(tablestore.CodeOperationTimedOut): "The operation could not be completed within the permitted time.",
}

var (
	errInternal              = apiError(http.StatusInternalServerError, "InternalError", "The server encountered an internal error. Please retry the request.")
	errServerBusy            = apiError(http.StatusServiceUnavailable, "ServerBusy", "The server is busy; retry the request.")
	errBodyTooLarge          = apiError(http.StatusRequestEntityTooLarge, "RequestBodyTooLarge", "The request body is too large and exceeds the maximum permissible limit.")
	errHeadersTooLarge       = apiError(http.StatusRequestHeaderFieldsTooLarge, "RequestHeaderFieldsTooLarge", "The request headers are too large.")
	errXMethodNotUsingPost   = apiError(http.StatusBadRequest, "XMethodNotUsingPost", "The HTTP method specified by the X-HTTP-Method header must be used with POST.")
	errXMethodIncorrectValue = apiError(http.StatusBadRequest, "XMethodIncorrectValue", "The X-HTTP-Method header value must be MERGE, PATCH, PUT or DELETE.")
	errXMethodIncorrectCount = apiError(http.StatusBadRequest, "XMethodIncorrectCount", "More than one X-HTTP-Method header was specified.")
	errMethodNotAllowed      = apiError(http.StatusMethodNotAllowed, "MethodNotAllowed", "The requested method is not allowed on the specified resource.")
	errInvalidURI            = apiError(http.StatusBadRequest, "InvalidUri", "The requested URI does not represent any resource on the server.")
	errAuthFailed            = apiError(http.StatusForbidden, "AuthenticationFailed", "Server failed to authenticate the request. Make sure the value of the Authorization header is formed correctly including the signature.")
	errPermission            = apiError(http.StatusForbidden, "AuthorizationPermissionMismatch", "This request is not authorized to perform this operation using this permission.")
	errResourceType          = apiError(http.StatusForbidden, "AuthorizationResourceTypeMismatch", "This request is not authorized to perform this operation using this resource type.")
)

// toAPIError turns any error into what the client is told.
func toAPIError(err error) *apiErr {
	var ae *apiErr
	if errors.As(err, &ae) {
		return ae
	}
	var te *tablestore.Error
	if errors.As(err, &te) {
		return fromLibrary(te)
	}
	switch {
	case errors.Is(err, tablestore.ErrClosed):
		return errServerBusy
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apiError(http.StatusInternalServerError, "OperationTimedOut", "The operation could not be completed within the permitted time.")
	}
	return errInternal
}

// fromLibrary maps a library error to its status; Azure's message text
// where clients know it, else the library's message.
func fromLibrary(e *tablestore.Error) *apiErr {
	code := string(e.Code)
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

// fail writes err as the response: JSON (odata.error) or, for the ACL
// and service operations, XML. Both carry x-ms-error-code.
func (q *request) fail(err error) {
	ae := q.failed(toAPIError(err)) // ops.go: the log's reason; Azure's message for auth failures
	hd := q.w.Header()
	hd.Set("x-ms-error-code", ae.code)
	msg := ae.msg + "\nRequestId:" + q.id + "\nTime:" + time.Now().UTC().Format("2006-01-02T15:04:05.0000000Z")
	if q.xml {
		hd.Set("Content-Type", "application/xml")
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="utf-8"?><m:error xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"><m:code>`)
		_ = xml.EscapeText(&b, []byte(ae.code))
		b.WriteString(`</m:code><m:message xml:lang="en-US">`)
		_ = xml.EscapeText(&b, []byte(msg))
		b.WriteString(`</m:message></m:error>`)
		q.w.WriteHeader(ae.status)
		_, _ = q.w.Write([]byte(b.String()))
		return
	}
	body := errorJSON(ae.code, msg)
	hd.Set("Content-Type", contentType(metaMinimal))
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	q.w.WriteHeader(ae.status)
	if q.r.Method != http.MethodHead {
		_, _ = q.w.Write(body)
	}
}

// errorJSON is Azure's one-line JSON error body.
func errorJSON(code, msg string) []byte {
	type message struct {
		Lang  string `json:"lang"`
		Value string `json:"value"`
	}
	type odataError struct {
		Code    string  `json:"code"`
		Message message `json:"message"`
	}
	b, _ := json.Marshal(map[string]odataError{"odata.error": {Code: code, Message: message{Lang: "en-US", Value: msg}}})
	return b
}

// as is errors.As, named for brevity at call sites with many returns.
func as(err error, target any) bool { return errors.As(err, target) }
