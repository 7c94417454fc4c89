package server

// Bearer configures bearer tokens.
type Bearer struct{}

func (b *Bearer) init() error { return nil }

type bearerGrant struct{ principal string }
