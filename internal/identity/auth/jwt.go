package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/seal"
)

// AccessTokenTTL is how long a session access token is valid; the refresh token renews it.
const AccessTokenTTL = 15 * time.Minute

// signingKeyLifetime is how long a key signs new tokens before the next one takes over; it keeps verifying
// for AccessTokenTTL after that, so a rotation never invalidates a live token.
const signingKeyLifetime = 30 * 24 * time.Hour

const tokenAudience = "outflow-api"

// SessionClaims are what a session access token asserts.
type SessionClaims struct {
	// SessionID names the session; revoking it ends the token's validity at once.
	SessionID uuid.UUID
	// UserID is the signed-in person.
	UserID uuid.UUID
	// OrganizationID is the organization selected when the token was issued (uuid.Nil when none).
	OrganizationID uuid.UUID
	// ExpiresAt is when the token stops being accepted.
	ExpiresAt time.Time
}

type accessClaims struct {
	jwt.Claims
	SessionID string `json:"sid"`
	OrgID     string `json:"org,omitempty"`
	Type      string `json:"typ"`
}

type signingKey struct {
	kid       string
	key       *ecdsa.PrivateKey
	retiresAt time.Time
}

// TokenSigner issues and verifies session access tokens (ES256 JWTs). Keys live in Postgres, sealed, so every
// API process signs and verifies with the same set.
type TokenSigner struct {
	pool    *pgxpool.Pool
	keyring *seal.Keyring
	issuer  string
	now     func() time.Time

	mu       sync.Mutex
	keys     map[string]signingKey
	loadedAt time.Time
}

// NewTokenSigner builds the signer; issuer is the deployment's public URL.
func NewTokenSigner(pool *pgxpool.Pool, keyring *seal.Keyring, issuer string) *TokenSigner {
	return &TokenSigner{pool: pool, keyring: keyring, issuer: issuer, now: time.Now, keys: map[string]signingKey{}}
}

// Sign returns an access token for the claims, valid for AccessTokenTTL, and its expiry.
func (s *TokenSigner) Sign(ctx context.Context, c SessionClaims) (string, time.Time, error) {
	key, err := s.currentKey(ctx)
	if err != nil {
		return "", time.Time{}, err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key.key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), key.kid))
	if err != nil {
		return "", time.Time{}, err
	}
	now := s.now()
	exp := now.Add(AccessTokenTTL)
	claims := accessClaims{
		Claims: jwt.Claims{
			Issuer: s.issuer, Subject: c.UserID.String(), Audience: jwt.Audience{tokenAudience},
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now.Add(-time.Minute)),
			Expiry: jwt.NewNumericDate(exp), ID: uuid.NewString(),
		},
		SessionID: c.SessionID.String(), Type: "access",
	}
	if c.OrganizationID != uuid.Nil {
		claims.OrgID = c.OrganizationID.String()
	}
	token, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return "", time.Time{}, err
	}
	return token, exp, nil
}

// errBadToken is the one answer for every access token that does not verify.
var errBadToken = errors.New("access token does not verify")

// Verify checks signature, issuer, audience and expiry and returns the claims.
func (s *TokenSigner) Verify(ctx context.Context, token string) (SessionClaims, error) {
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil || len(parsed.Headers) != 1 {
		return SessionClaims{}, errBadToken
	}
	key, err := s.verificationKey(ctx, parsed.Headers[0].KeyID)
	if err != nil {
		return SessionClaims{}, err
	}
	var claims accessClaims
	if err := parsed.Claims(&key.key.PublicKey, &claims); err != nil {
		return SessionClaims{}, errBadToken
	}
	if err := claims.ValidateWithLeeway(jwt.Expected{Issuer: s.issuer, AnyAudience: jwt.Audience{tokenAudience}, Time: s.now()}, 0); err != nil {
		return SessionClaims{}, errBadToken
	}
	if claims.Type != "access" {
		return SessionClaims{}, errBadToken
	}
	out := SessionClaims{ExpiresAt: claims.Expiry.Time()}
	if out.SessionID, err = uuid.Parse(claims.SessionID); err != nil {
		return SessionClaims{}, errBadToken
	}
	if out.UserID, err = uuid.Parse(claims.Subject); err != nil {
		return SessionClaims{}, errBadToken
	}
	if claims.OrgID != "" {
		if out.OrganizationID, err = uuid.Parse(claims.OrgID); err != nil {
			return SessionClaims{}, errBadToken
		}
	}
	return out, nil
}

// IsJWT reports whether a bearer token has the compact JWS form.
func IsJWT(token string) bool {
	return strings.Count(token, ".") == 2 && strings.HasPrefix(token, "eyJ")
}

func (s *TokenSigner) currentKey(ctx context.Context) (signingKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if best, ok := s.newestLocked(now); ok {
		return best, nil
	}
	if err := s.loadLocked(ctx); err != nil {
		return signingKey{}, err
	}
	if best, ok := s.newestLocked(now); ok {
		return best, nil
	}
	return s.createLocked(ctx, now)
}

func (s *TokenSigner) newestLocked(now time.Time) (signingKey, bool) {
	var best signingKey
	for _, k := range s.keys {
		if k.retiresAt.After(now) && k.retiresAt.After(best.retiresAt) {
			best = k
		}
	}
	return best, best.key != nil
}

func (s *TokenSigner) verificationKey(ctx context.Context, kid string) (signingKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[kid]
	if !ok && s.now().Sub(s.loadedAt) > time.Second {
		// A key another process created since we last looked.
		if err := s.loadLocked(ctx); err != nil {
			return signingKey{}, err
		}
		k, ok = s.keys[kid]
	}
	if !ok || s.now().After(k.retiresAt.Add(AccessTokenTTL)) {
		return signingKey{}, errBadToken
	}
	return k, nil
}

func (s *TokenSigner) loadLocked(ctx context.Context) error {
	rows, err := dbq.New().SigningKeyList(ctx, s.pool)
	if err != nil {
		return fmt.Errorf("load signing keys: %w", err)
	}
	for _, r := range rows {
		der, err := s.keyring.Open(r.PrivateKeySealed, "signing-key:"+r.Kid)
		if err != nil {
			return fmt.Errorf("open signing key %s: %w", r.Kid, err)
		}
		pk, err := x509.ParsePKCS8PrivateKey(der)
		if err != nil {
			return fmt.Errorf("parse signing key %s: %w", r.Kid, err)
		}
		ec, ok := pk.(*ecdsa.PrivateKey)
		if !ok {
			return fmt.Errorf("signing key %s is not ECDSA", r.Kid)
		}
		s.keys[r.Kid] = signingKey{kid: r.Kid, key: ec, retiresAt: r.RetiresAt}
	}
	s.loadedAt = s.now()
	return nil
}

func (s *TokenSigner) createLocked(ctx context.Context, now time.Time) (signingKey, error) {
	pk, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return signingKey{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(pk)
	if err != nil {
		return signingKey{}, err
	}
	var raw [8]byte
	_, _ = rand.Read(raw[:])
	kid := hex.EncodeToString(raw[:])
	k := signingKey{kid: kid, key: pk, retiresAt: now.Add(signingKeyLifetime)}
	if err := dbq.New().SigningKeyCreate(ctx, s.pool, dbq.SigningKeyCreateParams{
		Kid: kid, PrivateKeySealed: s.keyring.Seal(der, "signing-key:"+kid), RetiresAt: k.retiresAt,
	}); err != nil {
		return signingKey{}, fmt.Errorf("store signing key: %w", err)
	}
	s.keys[kid] = k
	return k, nil
}
