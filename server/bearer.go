package server

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/tablestore/tablestore/edm"
)

// Microsoft Entra ID bearer tokens, as Azure Storage takes them: a JWT
// in "Authorization: Bearer ...", over TLS only, verified offline
// against configured signing keys (a JWKS document), its issuer, its
// audience (https://storage.azure.com, Azure Storage's application ID
// e406a681-f3d4-42a8-90b6-c2b029497af1, or the account's endpoint under
// Options.PublicEndpoints, never the request's Host), and
// its expiry and not-before times within a small skew. What the token
// may do comes from a role: the token's roles claim, or a configured
// principal-to-role map by its oid (else sub) claim. A refused token is
// answered 401 InvalidAuthenticationInfo with a WWW-Authenticate
// challenge; a role that does not allow the operation, 403
// AuthorizationPermissionMismatch; a token over plain http, 403
// AuthorizationProtocolMismatch.

// The roles, by name and by Azure's role definition ID.
const (
	RoleTableDataReader      = "Storage Table Data Reader"
	RoleTableDataContributor = "Storage Table Data Contributor"

	roleReaderID      = "76199698-9eea-4c19-bc75-cec21354c6b6"
	roleContributorID = "0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3"
)

// StorageAudience is the audience of tokens for Azure Storage, the
// resource of the SDKs' scope https://storage.azure.com/.default.
const StorageAudience = "https://storage.azure.com"

// StorageAppID is Azure Storage's application ID, which Azure accepts as
// a token's audience beside StorageAudience (a token requested for the
// resource by its ID carries it).
const StorageAppID = "e406a681-f3d4-42a8-90b6-c2b029497af1"

// DefaultBearerSkew is the clock skew tolerated on a token's exp and nbf.
const DefaultBearerSkew = 2 * time.Minute

// Bearer configures bearer token authentication (Options.Bearer). A
// Bearer may be shared by several handlers; it must not be changed after
// New.
type Bearer struct {
	// JWKS is a JSON Web Key Set: the public keys (RSA, or EC on P-256,
	// P-384, P-521) that sign accepted tokens, chosen by the token's kid
	// (a token without kid is accepted only when the set holds one key).
	// Required unless
	// InsecureAcceptAnyToken.
	JWKS []byte
	// Issuers are the accepted iss values, such as
	// https://sts.windows.net/TENANT/ or
	// https://login.microsoftonline.com/TENANT/v2.0. Required unless
	// InsecureAcceptAnyToken.
	Issuers []string
	// Audiences are accepted aud values besides StorageAudience,
	// StorageAppID and the account's endpoints under
	// Options.PublicEndpoints (such as https://host:port/ACCOUNT).
	// Default none.
	Audiences []string
	// Skew is the clock skew tolerated on exp and nbf. Default
	// DefaultBearerSkew.
	Skew time.Duration
	// Principals maps a principal (the token's oid claim, else its sub)
	// to its role on the account (RoleTableDataReader or
	// RoleTableDataContributor), for tokens whose roles claim grants
	// nothing (see NewAccounts for several accounts). Default none.
	Principals map[string]string
	// AuthorizationURI goes into the WWW-Authenticate challenge, as
	// Azure's login endpoint does. Default
	// https://login.microsoftonline.com/common/oauth2/authorize.
	AuthorizationURI string
	// InsecureAcceptAnyToken accepts every bearer token, verifying
	// nothing, as Storage Table Data Contributor: for local development
	// only. New logs a warning each time it is set. Default false.
	InsecureAcceptAnyToken bool
	// Now is the clock; default time.Now.
	Now func() time.Time

	keys map[string]crypto.PublicKey // by kid; "" for keys without one
	all  []crypto.PublicKey
}

// init parses the JWKS and checks the configuration.
func (b *Bearer) init() error {
	if b.InsecureAcceptAnyToken {
		return nil
	}
	if len(b.Issuers) == 0 {
		return errors.New("tablestore: server: bearer tokens need at least one accepted issuer")
	}
	for p, role := range b.Principals {
		if role != RoleTableDataReader && role != RoleTableDataContributor {
			return fmt.Errorf("tablestore: server: principal %q: unknown role %q", p, role)
		}
	}
	var set struct {
		Keys []struct {
			Kty string `json:"kty"`
			Kid string `json:"kid"`
			Use string `json:"use"`
			N   string `json:"n"`
			E   string `json:"e"`
			Crv string `json:"crv"`
			X   string `json:"x"`
			Y   string `json:"y"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(b.JWKS, &set); err != nil {
		return fmt.Errorf("tablestore: server: the JWKS is not a JSON Web Key Set: %w", err)
	}
	b.keys = map[string]crypto.PublicKey{}
	b64 := base64.RawURLEncoding
	num := func(s string) (*big.Int, error) {
		v, err := b64.DecodeString(strings.TrimRight(s, "="))
		if err != nil || len(v) == 0 {
			return nil, errors.New("bad base64url number")
		}
		return new(big.Int).SetBytes(v), nil
	}
	for i, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		var pub crypto.PublicKey
		switch k.Kty {
		case "RSA":
			n, err1 := num(k.N)
			e, err2 := num(k.E)
			if err1 != nil || err2 != nil || !e.IsInt64() || n.BitLen() < 2048 {
				return fmt.Errorf("tablestore: server: JWKS key %d: a bad or short RSA key", i)
			}
			pub = &rsa.PublicKey{N: n, E: int(e.Int64())}
		case "EC":
			var curve elliptic.Curve
			switch k.Crv {
			case "P-256":
				curve = elliptic.P256()
			case "P-384":
				curve = elliptic.P384()
			case "P-521":
				curve = elliptic.P521()
			default:
				return fmt.Errorf("tablestore: server: JWKS key %d: unsupported curve %q", i, k.Crv)
			}
			size := (curve.Params().BitSize + 7) / 8
			x, err1 := b64.DecodeString(strings.TrimRight(k.X, "="))
			y, err2 := b64.DecodeString(strings.TrimRight(k.Y, "="))
			if err1 != nil || err2 != nil || len(x) > size || len(y) > size {
				return fmt.Errorf("tablestore: server: JWKS key %d: a bad EC key", i)
			}
			point := make([]byte, 1+2*size)
			point[0] = 4 // uncompressed
			copy(point[1+size-len(x):], x)
			copy(point[1+2*size-len(y):], y)
			ec, err := ecdsa.ParseUncompressedPublicKey(curve, point) // checks the point is on the curve
			if err != nil {
				return fmt.Errorf("tablestore: server: JWKS key %d: a bad EC key: %v", i, err)
			}
			pub = ec
		default:
			continue
		}
		b.keys[k.Kid] = pub
		b.all = append(b.all, pub)
	}
	if len(b.all) == 0 {
		return errors.New("tablestore: server: the JWKS holds no RSA or EC signing key")
	}
	return nil
}

// bearerGrant is what a verified token allows.
type bearerGrant struct {
	principal   string
	contributor bool // else reader
	// until is when the token stops being accepted (its exp plus the
	// skew), now the clock that says so; zero: never (ext_live.go).
	until time.Time
	now   func() time.Time
}

// tokenClaims are the claims read from a token.
type tokenClaims struct {
	jwt.RegisteredClaims
	OID   string   `json:"oid"`
	Roles []string `json:"roles"`
}

// UnmarshalJSON reads the claims, refusing exp, nbf and iat in any form
// but a JSON number (a quoted number is not a NumericDate).
func (c *tokenClaims) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for _, name := range []string{"exp", "nbf", "iat"} {
		v, ok := raw[name]
		if !ok {
			continue
		}
		if len(v) == 0 || !(v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
			return fmt.Errorf("claim %s is not a number", name)
		}
	}
	type plain tokenClaims // without this method
	return json.Unmarshal(b, (*plain)(c))
}

// errBearerRefused is Azure's answer to a token it does not accept.
var errBearerRefused = apiError(http.StatusUnauthorized, edm.CodeInvalidAuthenticationInfo,
	"Server failed to authenticate the request. Please refer to the information in the www-authenticate header.")

// checkBearer authenticates "Bearer TOKEN".
func (q *request) checkBearer(auth string) error {
	b := q.h.bearer
	if b == nil {
		q.why = "bearer tokens are not enabled on this server"
		return errAuthFailed
	}
	if q.r.TLS == nil {
		q.why = "a bearer token over plain http"
		return apiError(http.StatusForbidden, edm.CodeAuthorizationProtocolMismatch, "This request is not authorized to perform this operation using this protocol.")
	}
	raw := strings.TrimSpace(auth[len("Bearer"):])
	if b.InsecureAcceptAnyToken {
		q.bearer = &bearerGrant{principal: "(any token accepted: insecure mode)", contributor: true}
		return nil
	}
	refuse := func(why string) error {
		q.why = "bearer token: " + why
		q.w.Header().Set("WWW-Authenticate", b.challenge(true))
		return errBearerRefused
	}
	now := q.h.now
	if b.Now != nil {
		now = b.Now
	}
	skew := b.Skew
	if skew <= 0 {
		skew = DefaultBearerSkew
	}
	var claims tokenClaims
	tok, err := jwt.ParseWithClaims(raw, &claims, b.keyFor,
		jwt.WithValidMethods([]string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"}),
		jwt.WithLeeway(skew), jwt.WithTimeFunc(now), jwt.WithExpirationRequired())
	if err != nil || !tok.Valid {
		return refuse(fmt.Sprint(err))
	}
	issOK := false
	for _, iss := range b.Issuers {
		issOK = issOK || claims.Issuer == iss
	}
	if !issOK {
		return refuse(fmt.Sprintf("issuer %q is not accepted", claims.Issuer))
	}
	accepted, forAccount := q.h.audienceOK(claims.Audience)
	if !accepted {
		return refuse(fmt.Sprintf("audience %v is not accepted", []string(claims.Audience)))
	}
	g := &bearerGrant{principal: claims.OID, now: now}
	if claims.ExpiresAt != nil {
		g.until = claims.ExpiresAt.Add(skew)
	}
	if g.principal == "" {
		g.principal = claims.Subject
	}
	// Among several accounts, a roles claim for the generic storage
	// audience does not say which account it is for: the role then
	// comes from this account's Principals alone.
	roles := claims.Roles
	if q.h.bearerScoped && !forAccount {
		roles = nil
	}
	role := ""
	for _, r := range roles {
		switch r {
		case RoleTableDataContributor, roleContributorID:
			role = RoleTableDataContributor
		case RoleTableDataReader, roleReaderID:
			if role == "" {
				role = RoleTableDataReader
			}
		}
	}
	if role == "" && g.principal != "" {
		role = b.Principals[g.principal]
	}
	if role == "" {
		q.why = "bearer token of " + g.principal + ": no table data role on account " + q.h.account
		return errPermission
	}
	g.contributor = role == RoleTableDataContributor
	q.bearer = g
	return nil
}

// keyFor is jwt's Keyfunc: the JWKS key named by kid.
func (b *Bearer) keyFor(t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	if kid == "" {
		if len(b.all) == 1 {
			return b.all[0], nil
		}
		return nil, errors.New("the token names no key (kid) and the JWKS holds several")
	}
	k, ok := b.keys[kid]
	if !ok {
		return nil, fmt.Errorf("no key %q in the JWKS", kid)
	}
	return k, nil
}

// audienceOK reports whether one of aud is accepted, and whether one
// names this account: its endpoint, or an audience of a Bearer serving
// this account alone.
func (h *handler) audienceOK(aud jwt.ClaimStrings) (accepted, forAccount bool) {
	b := h.bearer
	for _, a := range aud {
		a = strings.TrimSuffix(a, "/")
		if a == StorageAudience || strings.EqualFold(a, StorageAppID) {
			accepted = true
		}
		for _, x := range b.Audiences {
			if a == strings.TrimSuffix(x, "/") {
				accepted = true
				forAccount = forAccount || !h.bearerShared
			}
		}
		n := normAudience(a)
		for _, e := range h.endpoints {
			if n == e {
				accepted, forAccount = true, true
			}
		}
	}
	return accepted, forAccount
}

// accountEndpoints returns account's endpoints under the public
// endpoints eps, normalized: ENDPOINT/ACCOUNT, and ENDPOINT itself when
// its host names the account host-style. Errors: an endpoint that is not
// an http or https URL with a host and no path, query or user.
func accountEndpoints(eps []string, account string) ([]string, error) {
	var out []string
	for _, ep := range eps {
		u, err := url.Parse(strings.TrimSuffix(ep, "/"))
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Path != "" ||
			u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return nil, fmt.Errorf("tablestore: server: public endpoint %q: want scheme://host[:port]", ep)
		}
		root := normAudience(u.String())
		out = append(out, root+"/"+account)
		if a := hostAccount(u.Host); a == account {
			out = append(out, root)
		}
	}
	return out, nil
}

// normAudience is an endpoint URL in the form endpoints are compared
// in: scheme and host in lower case, the scheme's default port dropped,
// no trailing '/'. A value that is not such a URL is returned as is.
func normAudience(s string) string {
	s = strings.TrimSuffix(s, "/")
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return s
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if h, port, err := net.SplitHostPort(host); err == nil &&
		(scheme == "https" && port == "443" || scheme == "http" && port == "80") {
		host = h
		if strings.Contains(h, ":") {
			host = "[" + h + "]"
		}
	}
	return scheme + "://" + host + strings.ToLower(u.EscapedPath())
}

// challenge is the WWW-Authenticate value: Azure's form, with
// error="invalid_token" when a token was refused.
func (b *Bearer) challenge(invalid bool) string {
	uri := b.AuthorizationURI
	if uri == "" {
		uri = "https://login.microsoftonline.com/common/oauth2/authorize"
	}
	s := "Bearer authorization_uri=" + uri + " resource_id=" + StorageAudience
	if invalid {
		s += ` error="invalid_token"`
	}
	return s
}

// allow checks an operation against the token's role: a reader may
// list tables and read entities and service properties; a contributor
// may do everything but Get and Set Table ACL, which no token may do:
// Azure documents them for the account owner only, and the table data
// roles have no data action for them.
func (g *bearerGrant) allow(o op) error {
	switch {
	case o == opGetACL || o == opSetACL:
		return errPermission
	case g.contributor:
		return nil
	}
	switch o {
	case opListTables, opRead, opGetService, opCapabilities:
		return nil
	}
	return errPermission
}
