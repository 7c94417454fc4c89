package server

// corsRules are the CORS rules of the stored service properties.
type corsRules struct{}

// cors answers a CORS preflight (returning true) or adds CORS headers.
func (q *request) cors() bool { return false }

func (h *handler) loadServiceProperties() {}
