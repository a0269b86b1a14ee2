package accounts

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// Challenge kinds: each multi-step flow keeps its pending step as one short-lived row.
const (
	ChallengeLogin           = "login"
	ChallengeRegister        = "register"
	ChallengeReset           = "reset"
	ChallengeTwoFA           = "two_fa"
	ChallengeSSOHandoff      = "sso_handoff"
	ChallengeSSOState        = "sso_state"
	ChallengePasskeyRegister = "passkey_register"
	ChallengePasskeyLogin    = "passkey_login"
)

// MaxCodeAttempts is how many wrong codes a challenge takes before it is spent.
const MaxCodeAttempts = 5

// Challenges issues and redeems the opaque, signed handles of multi-step flows. A handle is the row id plus an
// HMAC under a key derived from the deployment secret: a forged or altered handle is refused before any
// database read, and a code is stored only as an HMAC.
type Challenges struct {
	key []byte
	now func() time.Time
}

// NewChallenges derives the handle key from the deployment secret.
func NewChallenges(secret []byte) *Challenges {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("outflow/auth-challenge/v1"))
	return &Challenges{key: mac.Sum(nil), now: time.Now}
}

// NewChallenge describes a challenge to create.
type NewChallenge struct {
	Kind    string
	UserID  uuid.UUID
	Email   string
	Payload any
	TTL     time.Duration
	// WithCode makes the challenge redeemable only with a 6-digit code, returned once by Create.
	WithCode bool
}

// Create stores the challenge in tx and returns its handle (and the code when WithCode).
func (c *Challenges) Create(ctx context.Context, tx pgx.Tx, n NewChallenge) (handle, code string, err error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", "", err
	}
	payload, err := json.Marshal(n.Payload)
	if err != nil {
		return "", "", err
	}
	if n.Payload == nil {
		payload = []byte("{}")
	}
	var codeHash []byte
	if n.WithCode {
		v, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
		if err != nil {
			return "", "", err
		}
		code = fmt.Sprintf("%06d", v.Int64())
		codeHash = c.mac(id, code)
	}
	err = dbq.New().ChallengeCreate(ctx, tx, dbq.ChallengeCreateParams{
		ID: id, Kind: n.Kind, UserID: uuid.NullUUID{UUID: n.UserID, Valid: n.UserID != uuid.Nil},
		Email: n.Email, CodeHash: codeHash, Payload: payload, ExpiresAt: c.now().Add(n.TTL),
	})
	if err != nil {
		return "", "", fmt.Errorf("store challenge: %w", err)
	}
	return c.handle(id), code, nil
}

// Redeemed is a challenge that was just consumed.
type Redeemed struct {
	ID      uuid.UUID
	UserID  uuid.UUID
	Email   string
	Payload json.RawMessage
}

// ErrChallengeInvalid answers every handle or code that does not redeem: wrong, expired, used or forged.
var ErrChallengeInvalid = apierror.Unauthorized("invalid_code", "The code or session is wrong, expired or already used.")

// Redeem consumes the challenge behind handle in tx. code is checked when the challenge has one; a wrong code
// counts an attempt (committed even though Redeem fails) and the challenge is spent after MaxCodeAttempts.
func (c *Challenges) Redeem(ctx context.Context, pool db.Beginner, tx pgx.Tx, handle, kind, code string) (Redeemed, error) {
	id, ok := c.parse(handle)
	if !ok {
		return Redeemed{}, ErrChallengeInvalid
	}
	q := dbq.New()
	row, err := q.ChallengeGet(ctx, tx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return Redeemed{}, ErrChallengeInvalid
	}
	if err != nil {
		return Redeemed{}, err
	}
	if row.Kind != kind || row.ConsumedAt != nil || !c.now().Before(row.ExpiresAt) || row.Attempts >= MaxCodeAttempts {
		return Redeemed{}, ErrChallengeInvalid
	}
	if row.CodeHash != nil && !hmac.Equal(row.CodeHash, c.mac(id, strings.TrimSpace(code))) {
		// The attempt must count even though the caller's transaction will roll back.
		if err := db.WithTx(context.WithoutCancel(ctx), pool, func(ctx context.Context, tx pgx.Tx) error {
			return q.ChallengeCountAttempt(ctx, tx, id)
		}); err != nil {
			return Redeemed{}, err
		}
		return Redeemed{}, ErrChallengeInvalid
	}
	n, err := q.ChallengeConsume(ctx, tx, dbq.ChallengeConsumeParams{ID: id, MaxAttempts: MaxCodeAttempts})
	if err != nil {
		return Redeemed{}, err
	}
	if n == 0 {
		return Redeemed{}, ErrChallengeInvalid // consumed by a concurrent request
	}
	out := Redeemed{ID: id, Email: row.Email, Payload: row.Payload}
	if row.UserID.Valid {
		out.UserID = row.UserID.UUID
	}
	return out, nil
}

func (c *Challenges) handle(id uuid.UUID) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString(id[:]) + "." + enc.EncodeToString(c.mac(id, "")[:18])
}

func (c *Challenges) parse(handle string) (uuid.UUID, bool) {
	idPart, sigPart, ok := strings.Cut(handle, ".")
	if !ok || len(handle) > 100 {
		return uuid.Nil, false
	}
	enc := base64.RawURLEncoding
	raw, err := enc.DecodeString(idPart)
	if err != nil || len(raw) != 16 {
		return uuid.Nil, false
	}
	id := uuid.UUID(raw)
	sig, err := enc.DecodeString(sigPart)
	if err != nil || !hmac.Equal(sig, c.mac(id, "")[:18]) {
		return uuid.Nil, false
	}
	return id, true
}

func (c *Challenges) mac(id uuid.UUID, code string) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write(id[:])
	m.Write([]byte(code))
	return m.Sum(nil)
}
