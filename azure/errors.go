package azure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// azureCodes maps the error codes Azure's services send (the
// x-ms-error-code header or odata.error.code in the body) onto the
// library's. Every code the library defines maps to itself and is
// omitted; the entries are the codes that differ.
var azureCodes = map[string]ts.Code{
	// Listed by Azure, but Azure answers ResourceNotFound.
	"EntityNotFound": edm.CodeResourceNotFound,
	// Azurite's answer for a batch over 100 actions.
	"InvalidOperation": edm.CodeInvalidInput,
}

// statusCodes gives the code of a response that carries none, by HTTP
// status; 404 and 409 depend on the operation (see libraryCode).
var statusCodes = map[int]ts.Code{
	http.StatusBadRequest:            edm.CodeInvalidInput,
	http.StatusPreconditionFailed:    edm.CodeUpdateConditionNotSatisfied,
	http.StatusRequestEntityTooLarge: edm.CodeRequestBodyTooLarge,
	http.StatusNotImplemented:        edm.CodeNotImplemented,
	http.StatusInternalServerError:   edm.CodeInternalError,
	http.StatusServiceUnavailable:    edm.CodeServerBusy,
}

// opKind names the operation an error came from, for the codes that
// depend on it.
type opKind uint8

const (
	opEntity      opKind = iota // an entity read or write, a query
	opCreateTable               // 409 without a code: TableAlreadyExists
	opDeleteTable               // 404: ResourceNotFound, whatever the code
)

// libraryCode returns the library's code for Azure's code and status.
// Codes the library does not define (AuthenticationFailed,
// AuthorizationPermissionMismatch, ...) are kept as Azure sent them.
func libraryCode(azureCode string, status int, op opKind) ts.Code {
	if op == opDeleteTable && status == http.StatusNotFound {
		return edm.CodeResourceNotFound // Azure's answer; Azurite says TableNotFound
	}
	if c, ok := azureCodes[azureCode]; ok {
		return c
	}
	if azureCode != "" {
		return ts.Code(azureCode)
	}
	switch {
	case status == http.StatusNotFound && op == opEntity:
		return edm.CodeResourceNotFound
	case status == http.StatusConflict && op == opCreateTable:
		return edm.CodeTableAlreadyExists
	case status == http.StatusConflict:
		return edm.CodeEntityAlreadyExists
	}
	if c, ok := statusCodes[status]; ok {
		return c
	}
	return ts.Code(fmt.Sprintf("HTTP%d", status))
}

// mapError turns an error of aztables into the driver's: an
// *azcore.ResponseError becomes a *driver.Error with the library's code
// and Azure's message; context errors pass through; anything else (a
// transport failure after the SDK's retries) is wrapped with the
// driver's prefix.
func mapError(err error, op opKind) error {
	if err == nil {
		return nil
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return fmt.Errorf("tablestore: azure: %w", err)
	}
	var body []byte
	if re.RawResponse != nil {
		body, _ = runtime.Payload(re.RawResponse)
	}
	code, msg := odataError(body)
	if re.ErrorCode != "" {
		code = re.ErrorCode
	}
	return &driver.Error{Code: libraryCode(code, re.StatusCode, op), Message: describe(msg, re.StatusCode)}
}

// describe makes Azure's message the driver's: its first line (Azure adds
// RequestId and Time lines), lowercase first letter, with the status.
func describe(msg string, status int) string {
	msg, _, _ = strings.Cut(msg, "\n")
	msg = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(msg), "."))
	if msg == "" {
		return fmt.Sprintf("azure answered %d %s", status, strings.ToLower(http.StatusText(status)))
	}
	return fmt.Sprintf("azure answered %d: %s", status, strings.ToLower(msg[:1])+msg[1:])
}

// odataError reads Azure's JSON error body,
// {"odata.error":{"code":"...","message":{"value":"..."}}} (or "error"
// for some services); "" for what is not such a body.
func odataError(body []byte) (code, msg string) {
	var e struct {
		OData *odataBody `json:"odata.error"`
		Plain *odataBody `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", ""
	}
	b := e.OData
	if b == nil {
		b = e.Plain
	}
	if b == nil {
		return "", ""
	}
	var m struct {
		Value string `json:"value"`
	}
	if json.Unmarshal(b.Message, &m) != nil || m.Value == "" {
		var s string
		if json.Unmarshal(b.Message, &s) == nil {
			m.Value = s
		}
	}
	return b.Code, m.Value
}

type odataBody struct {
	Code    string          `json:"code"`
	Message json.RawMessage `json:"message"`
}
