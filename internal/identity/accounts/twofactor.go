package accounts

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	"github.com/pquerna/otp/totp"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
	"github.com/outflowhq/outflow/internal/platform/seal"
)

// TOTPIssuer is the issuer authenticator apps show next to the account.
const TOTPIssuer = "Outflow"

// RecoveryCodeCount is how many single-use recovery codes a 2FA enrolment hands out.
const RecoveryCodeCount = 10

// totpPeriod is the TOTP time step; codes of the step before and after the current one are accepted too, so a
// clock a little off still works.
const totpPeriod = 30 * time.Second

// limitTwoFAPerAccount bounds the codes tried against one account (sign-in verification, enrolment confirmation
// and turning 2FA off share it): 6-digit codes must not be guessable by volume.
var limitTwoFAPerAccount = auth.Limit{Max: 10, Window: 10 * time.Minute}

var (
	errTwoFAEnabled = apierror.Conflict("two_fa_enabled",
		"Two-factor authentication is already on. Turn it off first (DELETE /auth/2fa with a code) to enrol again.")
	errTwoFANotStarted = apierror.BadRequest("two_fa_not_started",
		"No enrolment is pending. Start one with POST /auth/2fa/enroll/start.")
	errTwoFANotEnabled = apierror.BadRequest("two_fa_not_enabled", "Two-factor authentication is not on.")
	errWrongCode       = apierror.BadRequest("invalid_code", "The code is wrong, expired or already used.")
)

// TwoFactor runs TOTP two-factor authentication: enrolment, the second step of a sign-in and turning it off. The
// TOTP secret is sealed at rest; recovery codes are stored only as keyed hashes.
type TwoFactor struct {
	flows   *Flows
	keyring *seal.Keyring
	// recoveryKeys hash recovery codes, one per deployment secret (the current one first), so codes issued
	// before a secret rotation keep working.
	recoveryKeys [][]byte
	now          func() time.Time
}

// NewTwoFactor builds the 2FA service. secrets are the deployment secrets, current first.
func NewTwoFactor(flows *Flows, keyring *seal.Keyring, secrets ...[]byte) *TwoFactor {
	t := &TwoFactor{flows: flows, keyring: keyring, now: time.Now}
	for _, s := range secrets {
		mac := hmac.New(sha256.New, s)
		mac.Write([]byte("outflow/recovery-code/v1"))
		t.recoveryKeys = append(t.recoveryKeys, mac.Sum(nil))
	}
	return t
}

// Enabled tells whether the user has confirmed a TOTP enrolment.
func (t *TwoFactor) Enabled(ctx context.Context, userID uuid.UUID) (bool, error) {
	return dbq.New().TwoFactorEnabled(ctx, t.flows.Pool, userID)
}

// Enrollment is a fresh TOTP secret, shown to the user once.
type Enrollment struct {
	Secret     string
	OTPAuthURI string
}

// EnrollStart generates a new TOTP secret for the user and keeps it (sealed) until EnrollConfirm; starting again
// replaces a pending secret. An account with 2FA on is refused: re-enrolling would otherwise let a stolen session
// swap the second factor without knowing it.
func (t *TwoFactor) EnrollStart(ctx context.Context, userID uuid.UUID) (Enrollment, error) {
	if err := t.flows.Limiter.Allow(ctx, "2fa-enroll:account:"+userID.String(), limitPerAccount); err != nil {
		return Enrollment{}, err
	}
	q := dbq.New()
	user, err := q.UserGetByID(ctx, t.flows.Pool, userID)
	if err != nil {
		return Enrollment{}, err
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: TOTPIssuer, AccountName: user.Email,
		Period: uint(totpPeriod.Seconds()), SecretSize: 20, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return Enrollment{}, err
	}
	n, err := q.TwoFactorStartEnrollment(ctx, t.flows.Pool, dbq.TwoFactorStartEnrollmentParams{
		UserID: userID, SecretSealed: t.keyring.Seal([]byte(key.Secret()), totpContext(userID)),
	})
	if err != nil {
		return Enrollment{}, err
	}
	if n == 0 {
		return Enrollment{}, errTwoFAEnabled
	}
	return Enrollment{Secret: key.Secret(), OTPAuthURI: key.URL()}, nil
}

// EnrollConfirm checks a code from the authenticator app against the pending secret, turns 2FA on and returns
// the recovery codes, which exist in clear only in this answer. The code's time step counts as used.
func (t *TwoFactor) EnrollConfirm(ctx context.Context, userID uuid.UUID, code string) ([]string, error) {
	if err := t.flows.Limiter.Allow(ctx, "2fa:account:"+userID.String(), limitTwoFAPerAccount); err != nil {
		return nil, err
	}
	var codes []string
	err := db.WithTx(ctx, t.flows.Pool, func(ctx context.Context, tx pgx.Tx) error {
		q := dbq.New()
		row, err := q.TwoFactorGetForUpdate(ctx, tx, userID)
		if errors.Is(err, pgx.ErrNoRows) {
			return errTwoFANotStarted
		}
		if err != nil {
			return err
		}
		if row.EnabledAt != nil {
			return errTwoFAEnabled
		}
		step, ok, err := t.totpStep(row, code)
		if err != nil {
			return err
		}
		if !ok {
			return errWrongCode
		}
		if err := q.TwoFactorEnable(ctx, tx, dbq.TwoFactorEnableParams{UserID: userID, Step: step}); err != nil {
			return err
		}
		var hashes [][]byte
		codes, hashes = t.newRecoveryCodes(userID)
		return q.RecoveryCodesReplace(ctx, tx, dbq.RecoveryCodesReplaceParams{UserID: userID, CodeHashes: hashes})
	})
	if err != nil {
		return nil, err
	}
	return codes, nil
}

// Disable turns 2FA off for the user when code is a current TOTP code or an unused recovery code, and forgets
// the secret and every recovery code.
func (t *TwoFactor) Disable(ctx context.Context, userID uuid.UUID, code string) error {
	if err := t.flows.Limiter.Allow(ctx, "2fa:account:"+userID.String(), limitTwoFAPerAccount); err != nil {
		return err
	}
	return db.WithTx(ctx, t.flows.Pool, func(ctx context.Context, tx pgx.Tx) error {
		q := dbq.New()
		row, err := q.TwoFactorGetForUpdate(ctx, tx, userID)
		if errors.Is(err, pgx.ErrNoRows) {
			return errTwoFANotEnabled
		}
		if err != nil {
			return err
		}
		if row.EnabledAt == nil {
			return errTwoFANotEnabled
		}
		ok, err := t.redeemSecondFactor(ctx, tx, row, code)
		if err != nil {
			return err
		}
		if !ok {
			return errWrongCode
		}
		if err := q.TwoFactorDelete(ctx, tx, userID); err != nil {
			return err
		}
		return q.RecoveryCodesDelete(ctx, tx, userID)
	})
}

// errSecondFactorRejected marks a wrong code inside VerifyLogin, so the attempt is counted once the
// transaction that held the pending token has rolled back.
var errSecondFactorRejected = errors.New("accounts: second factor rejected")

// VerifyLogin completes a sign-in that answered with the 2FA challenge: the pending token from CompleteSignIn
// plus a TOTP code (single use within its time step) or an unused recovery code (single use) start the
// session. A wrong code leaves the pending token usable until MaxCodeAttempts wrong codes spend it.
func (t *TwoFactor) VerifyLogin(ctx context.Context, pendingToken, code string) (TokenPair, error) {
	if err := t.flows.Limiter.Allow(ctx, "2fa-verify:ip:"+reqctx.From(ctx).ClientIP, limitPerIP); err != nil {
		return TokenPair{}, err
	}
	var (
		pair        TokenPair
		email       string
		challengeID uuid.UUID
	)
	err := db.WithTx(ctx, t.flows.Pool, func(ctx context.Context, tx pgx.Tx) error {
		r, err := t.flows.Challenges.Redeem(ctx, t.flows.Pool, tx, pendingToken, ChallengeTwoFA, "")
		if err != nil {
			return err
		}
		if err := t.flows.Limiter.Allow(ctx, "2fa:account:"+r.UserID.String(), limitTwoFAPerAccount); err != nil {
			return err
		}
		q := dbq.New()
		row, err := q.TwoFactorGetForUpdate(ctx, tx, r.UserID)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && row.EnabledAt == nil) {
			return ErrChallengeInvalid // 2FA was turned off meanwhile: sign in again
		}
		if err != nil {
			return err
		}
		ok, err := t.redeemSecondFactor(ctx, tx, row, code)
		if err != nil {
			return err
		}
		if !ok {
			challengeID = r.ID
			return errSecondFactorRejected
		}
		var p struct {
			Provider string `json:"provider"`
		}
		if err := json.Unmarshal(r.Payload, &p); err != nil {
			return err
		}
		user, err := q.UserGetByID(ctx, tx, r.UserID)
		if err != nil {
			return err
		}
		email = user.Email
		pair, err = t.flows.StartSession(ctx, tx, r.UserID, p.Provider)
		return err
	})
	if errors.Is(err, errSecondFactorRejected) {
		// The pending token's row is unlocked now that the transaction rolled back.
		if err := db.WithTx(context.WithoutCancel(ctx), t.flows.Pool, func(ctx context.Context, tx pgx.Tx) error {
			return dbq.New().ChallengeCountAttempt(ctx, tx, challengeID)
		}); err != nil {
			return TokenPair{}, err
		}
		return TokenPair{}, ErrChallengeInvalid
	}
	if err != nil {
		return TokenPair{}, err
	}
	t.flows.alert(ctx, email)
	return pair, nil
}

// redeemSecondFactor accepts code as a TOTP code whose time step is newer than the last one used (and records
// the step), or as an unused recovery code (and spends it). row must be locked by tx.
func (t *TwoFactor) redeemSecondFactor(ctx context.Context, tx pgx.Tx, row dbq.UserTwoFactor, code string) (bool, error) {
	q := dbq.New()
	step, ok, err := t.totpStep(row, code)
	if err != nil {
		return false, err
	}
	if ok {
		return true, q.TwoFactorUseStep(ctx, tx, dbq.TwoFactorUseStepParams{UserID: row.UserID, Step: step})
	}
	normalized, ok := normalizeRecoveryCode(code)
	if !ok {
		return false, nil
	}
	hashes := make([][]byte, len(t.recoveryKeys))
	for i, k := range t.recoveryKeys {
		hashes[i] = recoveryHash(k, row.UserID, normalized)
	}
	n, err := q.RecoveryCodeUse(ctx, tx, dbq.RecoveryCodeUseParams{UserID: row.UserID, CodeHashes: hashes})
	return n == 1, err
}

// totpStep finds the time step (current, previous or next) whose code is code and which is newer than the last
// step used, so a code works once even inside its own 30 seconds.
func (t *TwoFactor) totpStep(row dbq.UserTwoFactor, code string) (int64, bool, error) {
	code = strings.TrimSpace(code)
	if len(code) != 6 {
		return 0, false, nil
	}
	secret, err := t.keyring.Open(row.SecretSealed, totpContext(row.UserID))
	if err != nil {
		return 0, false, err
	}
	now := t.now().Unix() / int64(totpPeriod.Seconds())
	for step := now - 1; step <= now+1; step++ {
		if step <= row.LastUsedStep {
			continue
		}
		ok, err := hotp.ValidateCustom(code, uint64(step), string(secret),
			hotp.ValidateOpts{Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			return 0, false, nil // not a well-formed code
		}
		if ok {
			return step, true, nil
		}
	}
	return 0, false, nil
}

// newRecoveryCodes makes RecoveryCodeCount codes of 10 base32 characters (50 bits each), shown as
// "xxxxx-xxxxx", and their hashes under the current key.
func (t *TwoFactor) newRecoveryCodes(userID uuid.UUID) (codes []string, hashes [][]byte) {
	enc := base32.StdEncoding.WithPadding(base32.NoPadding)
	for range RecoveryCodeCount {
		var raw [7]byte
		_, _ = rand.Read(raw[:])
		c := strings.ToLower(enc.EncodeToString(raw[:]))[:10]
		codes = append(codes, c[:5]+"-"+c[5:])
		hashes = append(hashes, recoveryHash(t.recoveryKeys[0], userID, c))
	}
	return codes, hashes
}

// normalizeRecoveryCode lowercases a recovery code and drops the separators people type.
func normalizeRecoveryCode(code string) (string, bool) {
	c := strings.ToLower(strings.NewReplacer("-", "", " ", "").Replace(strings.TrimSpace(code)))
	if len(c) != 10 {
		return "", false
	}
	for _, r := range c {
		if (r < 'a' || r > 'z') && (r < '2' || r > '7') {
			return "", false
		}
	}
	return c, true
}

// recoveryHash binds a recovery code to its user under a key the database does not hold, so a copy of the
// table alone cannot be brute-forced.
func recoveryHash(key []byte, userID uuid.UUID, normalized string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(userID[:])
	m.Write([]byte(normalized))
	return m.Sum(nil)
}

// totpContext binds a sealed TOTP secret to its user.
func totpContext(userID uuid.UUID) string { return "totp:" + userID.String() }
