package accounts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
)

// RefreshTokenTTL is how long a refresh token (and so an idle session) lives; each use rotates it.
const RefreshTokenTTL = 30 * 24 * time.Hour

// refreshTokenPrefix marks refresh tokens so they are never mistaken for access tokens or API keys.
const refreshTokenPrefix = "ofr_"

// TokenPair is what every completed sign-in returns.
type TokenPair struct {
	AccessToken      string
	AccessExpiresAt  time.Time
	RefreshToken     string
	RefreshExpiresAt time.Time
	SessionID        uuid.UUID
}

// Sessions creates, rotates and ends sign-in sessions.
type Sessions struct {
	pool   *pgxpool.Pool
	signer *auth.TokenSigner
	now    func() time.Time
}

// NewSessions builds the session service.
func NewSessions(pool *pgxpool.Pool, signer *auth.TokenSigner) *Sessions {
	return &Sessions{pool: pool, signer: signer, now: time.Now}
}

// Start opens a session for user in tx (organization may be uuid.Nil) and returns its first token pair.
// provider names how the user proved who they are (password, passkey, google, apple, oidc).
func (s *Sessions) Start(ctx context.Context, tx pgx.Tx, userID, orgID uuid.UUID, provider string) (TokenPair, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return TokenPair{}, err
	}
	info := reqctx.From(ctx)
	browser, os := describeAgent(info.UserAgent)
	refreshExp := s.now().Add(RefreshTokenTTL)
	q := dbq.New()
	if _, err := q.SessionCreate(ctx, tx, dbq.SessionCreateParams{
		ID: id, UserID: userID, OrganizationID: uuid.NullUUID{UUID: orgID, Valid: orgID != uuid.Nil},
		AuthProvider: provider, Browser: browser, Os: os, IpAddress: info.ClientIP, RefreshExpiresAt: refreshExp,
		LocationCity: info.Location.City, LocationRegion: info.Location.Region,
		LocationCountry: info.Location.Country, CountryCode: info.Location.CountryCode,
	}); err != nil {
		return TokenPair{}, fmt.Errorf("create session: %w", err)
	}
	return s.issue(ctx, tx, id, userID, orgID, refreshExp)
}

func (s *Sessions) issue(ctx context.Context, tx pgx.Tx, sessionID, userID, orgID uuid.UUID, refreshExp time.Time) (TokenPair, error) {
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	refresh := refreshTokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	if err := dbq.New().RefreshTokenCreate(ctx, tx, dbq.RefreshTokenCreateParams{TokenHash: hashToken(refresh), SessionID: sessionID}); err != nil {
		return TokenPair{}, fmt.Errorf("store refresh token: %w", err)
	}
	access, accessExp, err := s.signer.Sign(ctx, auth.SessionClaims{SessionID: sessionID, UserID: userID, OrganizationID: orgID})
	if err != nil {
		return TokenPair{}, err
	}
	return TokenPair{AccessToken: access, AccessExpiresAt: accessExp, RefreshToken: refresh, RefreshExpiresAt: refreshExp, SessionID: sessionID}, nil
}

// errRefreshInvalid answers every refresh token that does not renew a session.
var errRefreshInvalid = apierror.Unauthorized("invalid_refresh_token", "The refresh token is invalid, expired or revoked. Sign in again.")

// Refresh rotates a refresh token: the presented one stops working and a new pair is returned. Presenting a
// token that was already rotated means it leaked (or a client raced itself): the whole session is revoked.
func (s *Sessions) Refresh(ctx context.Context, refreshToken string) (TokenPair, error) {
	if !strings.HasPrefix(refreshToken, refreshTokenPrefix) || len(refreshToken) > 100 {
		return TokenPair{}, errRefreshInvalid
	}
	var pair TokenPair
	reused := false
	err := db.WithTx(ctx, s.pool, func(ctx context.Context, tx pgx.Tx) error {
		q := dbq.New()
		row, err := q.RefreshTokenGetForUpdate(ctx, tx, hashToken(refreshToken))
		if errors.Is(err, pgx.ErrNoRows) {
			return errRefreshInvalid
		}
		if err != nil {
			return err
		}
		if row.RevokedAt != nil || !s.now().Before(row.RefreshExpiresAt) {
			return errRefreshInvalid
		}
		if row.RotatedAt != nil {
			reused = true
			_, err := q.SessionRevoke(ctx, tx, dbq.SessionRevokeParams{ID: row.SessionID, UserID: row.UserID, Reason: "refresh token reused"})
			return err // commit the revocation; the caller still gets a 401
		}
		if err := q.RefreshTokenMarkRotated(ctx, tx, row.TokenHash); err != nil {
			return err
		}
		refreshExp := s.now().Add(RefreshTokenTTL)
		if err := q.SessionRotate(ctx, tx, dbq.SessionRotateParams{ID: row.SessionID, RefreshExpiresAt: refreshExp}); err != nil {
			return err
		}
		org := uuid.Nil
		if row.OrganizationID.Valid {
			org = row.OrganizationID.UUID
		}
		pair, err = s.issue(ctx, tx, row.SessionID, row.UserID, org, refreshExp)
		return err
	})
	if err != nil {
		return TokenPair{}, err
	}
	if reused {
		return TokenPair{}, apierror.Unauthorized("refresh_token_reused", "This refresh token was already used; the session has been ended. Sign in again.")
	}
	return pair, nil
}

// SwitchOrganization reissues the session's tokens scoped to org (the caller checked membership).
func (s *Sessions) SwitchOrganization(ctx context.Context, tx pgx.Tx, sessionID, userID, orgID uuid.UUID) (TokenPair, error) {
	refreshExp := s.now().Add(RefreshTokenTTL)
	if err := dbq.New().SessionRotate(ctx, tx, dbq.SessionRotateParams{
		ID: sessionID, RefreshExpiresAt: refreshExp, OrganizationID: uuid.NullUUID{UUID: orgID, Valid: true},
	}); err != nil {
		return TokenPair{}, err
	}
	return s.issue(ctx, tx, sessionID, userID, orgID, refreshExp)
}

// Revoke ends one of the user's sessions; false when there is no such live session of theirs.
func (s *Sessions) Revoke(ctx context.Context, userID, sessionID uuid.UUID, reason string) (bool, error) {
	n, err := dbq.New().SessionRevoke(ctx, s.pool, dbq.SessionRevokeParams{ID: sessionID, UserID: userID, Reason: reason})
	return n > 0, err
}

// RevokeAll ends every live session of the user except `except` (uuid.Nil ends them all).
func (s *Sessions) RevokeAll(ctx context.Context, q dbq.DBTX, userID, except uuid.UUID, reason string) error {
	_, err := dbq.New().SessionRevokeAllForUser(ctx, q, dbq.SessionRevokeAllForUserParams{UserID: userID, ExceptID: except, Reason: reason})
	return err
}

func hashToken(t string) []byte {
	sum := sha256.Sum256([]byte(t))
	return sum[:]
}

// describeAgent names the browser and operating system of a User-Agent for the sessions list.
func describeAgent(ua string) (browser, os string) {
	switch {
	case strings.Contains(ua, "Edg/"):
		browser = "Edge"
	case strings.Contains(ua, "OPR/"):
		browser = "Opera"
	case strings.Contains(ua, "Firefox/"):
		browser = "Firefox"
	case strings.Contains(ua, "Chrome/"):
		browser = "Chrome"
	case strings.Contains(ua, "Safari/"):
		browser = "Safari"
	case ua != "":
		browser = strings.SplitN(strings.SplitN(ua, " ", 2)[0], "/", 2)[0]
	}
	switch {
	case strings.Contains(ua, "iPhone"), strings.Contains(ua, "iPad"):
		os = "iOS"
	case strings.Contains(ua, "Android"):
		os = "Android"
	case strings.Contains(ua, "Windows"):
		os = "Windows"
	case strings.Contains(ua, "Mac OS X"), strings.Contains(ua, "Macintosh"):
		os = "macOS"
	case strings.Contains(ua, "Linux"):
		os = "Linux"
	}
	return browser, os
}
