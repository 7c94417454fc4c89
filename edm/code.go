package edm

// Code is one of Azure Table Storage's error codes, such as
// "EntityAlreadyExists". Every package of this module names failures with
// these constants, so a code reaches the user, the driver boundary and the
// wire unchanged.
type Code string

// Codes of the data operations: Azure's, with Azure's meaning.
const (
	CodeTableAlreadyExists                      Code = "TableAlreadyExists"
	CodeTableNotFound                           Code = "TableNotFound"
	CodeResourceNotFound                        Code = "ResourceNotFound"
	CodeEntityAlreadyExists                     Code = "EntityAlreadyExists"
	CodeUpdateConditionNotSatisfied             Code = "UpdateConditionNotSatisfied"
	CodePropertiesNeedValue                     Code = "PropertiesNeedValue"
	CodeInvalidInput                            Code = "InvalidInput"
	CodeOutOfRangeInput                         Code = "OutOfRangeInput"
	CodeInvalidResourceName                     Code = "InvalidResourceName"
	CodePropertyValueTooLarge                   Code = "PropertyValueTooLarge"
	CodeEntityTooLarge                          Code = "EntityTooLarge"
	CodeTooManyProperties                       Code = "TooManyProperties"
	CodeKeyValueTooLarge                        Code = "KeyValueTooLarge"
	CodePropertyNameInvalid                     Code = "PropertyNameInvalid"
	CodePropertyNameTooLong                     Code = "PropertyNameTooLong"
	CodeDuplicatePropertiesSpecified            Code = "DuplicatePropertiesSpecified"
	CodeInvalidValueType                        Code = "InvalidValueType"
	CodeInvalidDuplicateRow                     Code = "InvalidDuplicateRow"
	CodeCommandsInBatchActOnDifferentPartitions Code = "CommandsInBatchActOnDifferentPartitions"
	CodeNotImplemented                          Code = "NotImplemented"
	CodeRequestBodyTooLarge                     Code = "RequestBodyTooLarge"
	// CodeTableBeingDeleted comes only from a remote service: Azure
	// refuses to create a table for about 40 s after a table of that name
	// was deleted.
	CodeTableBeingDeleted Code = "TableBeingDeleted"
	// The codes of failures of the store rather than the request.
	CodeInternalError     Code = "InternalError"
	CodeServerBusy        Code = "ServerBusy"
	CodeOperationTimedOut Code = "OperationTimedOut"
	// CodeStoreClosed is this module's own, not Azure's: the operation
	// ran on a closed store, and retrying it on the same handle cannot
	// succeed.
	CodeStoreClosed Code = "StoreClosed"
)

// Codes of the REST protocol: requests that fail before they reach a
// table, as Azure answers them.
const (
	CodeInvalidXMLDocument                 Code = "InvalidXmlDocument"
	CodeInvalidURI                         Code = "InvalidUri"
	CodeInvalidHeaderValue                 Code = "InvalidHeaderValue"
	CodeInvalidQueryParameterValue         Code = "InvalidQueryParameterValue"
	CodeXMethodNotUsingPost                Code = "XMethodNotUsingPost"
	CodeXMethodIncorrectValue              Code = "XMethodIncorrectValue"
	CodeXMethodIncorrectCount              Code = "XMethodIncorrectCount"
	CodeMethodNotAllowed                   Code = "MethodNotAllowed"
	CodeJSONFormatNotSupported             Code = "JsonFormatNotSupported"
	CodeAtomFormatNotSupported             Code = "AtomFormatNotSupported"
	CodeAuthenticationFailed               Code = "AuthenticationFailed"
	CodeAuthorizationPermissionMismatch    Code = "AuthorizationPermissionMismatch"
	CodeAuthorizationResourceTypeMismatch  Code = "AuthorizationResourceTypeMismatch"
	CodeAuthorizationServiceMismatch       Code = "AuthorizationServiceMismatch"
	CodeAuthorizationSourceIPMismatch      Code = "AuthorizationSourceIPMismatch"
	CodeAuthorizationProtocolMismatch      Code = "AuthorizationProtocolMismatch"
	CodeRequestHeaderFieldsTooLarge        Code = "RequestHeaderFieldsTooLarge"
	CodeUnsupportedHTTPVerb                Code = "UnsupportedHttpVerb"
	CodeInvalidBatchRequest                Code = "InvalidBatchRequest"
	CodeMissingRequiredHeader              Code = "MissingRequiredHeader"
	CodeResourceTypeMismatch               Code = "ResourceTypeMismatch"
	CodeUnsupportedQueryParameter          Code = "UnsupportedQueryParameter"
	CodeOperationNotAllowedOnCurrentTarget Code = "OperationNotAllowedOnCurrentTarget"
	CodeAuthorizationFailure               Code = "AuthorizationFailure"
	CodeInvalidAuthenticationInfo          Code = "InvalidAuthenticationInfo"
	CodeCorsPreflightFailure               Code = "CorsPreflightFailure"
	CodeInvalidXMLNodeValue                Code = "InvalidXmlNodeValue"
)
