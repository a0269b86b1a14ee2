package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/identity/captcha"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
	"github.com/outflowhq/outflow/internal/platform/sysmail"
)

// Lifetimes of the flows' steps.
const (
	EmailCodeTTL    = 10 * time.Minute
	ResetTTL        = 30 * time.Minute
	TwoFAPendingTTL = 300 * time.Second
	TrialLength     = 14 * 24 * time.Hour
)

// Abuse limits on the public sign-in endpoints (per source IP and per account).
var (
	limitPerIP      = auth.Limit{Max: 30, Window: 10 * time.Minute}
	limitPerAccount = auth.Limit{Max: 10, Window: 10 * time.Minute}
	// Refreshes are routine for every client behind one address, so they get a wider budget.
	limitRefreshPerIP = auth.Limit{Max: 300, Window: 10 * time.Minute}
)

// Flows runs sign-up, sign-in and password recovery.
type Flows struct {
	Pool       *pgxpool.Pool
	Challenges *Challenges
	Sessions   *Sessions
	Mail       sysmail.Sender
	Captcha    captcha.Verifier
	Limiter    *auth.Limiter
	Logger     *slog.Logger
	// RequireEmailVerification sends a code before creating an account; off creates it at once.
	RequireEmailVerification bool
	// AppURL is where links in system mail point.
	AppURL string
}

// SignIn is the result of a completed first factor: tokens, or the 2FA challenge.
type SignIn struct {
	Tokens       *TokenPair
	PendingToken string
}

// dummyHash keeps a login for an unknown email as slow as one for a known email.
var dummyHash = auth.HashPassword("not a real password, only here for timing")

var errBadLogin = apierror.Unauthorized("invalid_credentials", "The email or password is wrong.")

func normalize(email string) (string, error) {
	e, err := normalizeEmail(email)
	if err != nil {
		return "", apierror.BadRequest("invalid_email", "Give a valid email address.")
	}
	return e, nil
}

func (f *Flows) guard(ctx context.Context, action, email, captchaToken string) error {
	info := reqctx.From(ctx)
	if err := f.Limiter.Allow(ctx, action+":ip:"+info.ClientIP, limitPerIP); err != nil {
		return err
	}
	if email != "" {
		if err := f.Limiter.Allow(ctx, action+":account:"+email, limitPerAccount); err != nil {
			return err
		}
	}
	return f.Captcha.Verify(ctx, captchaToken, info.ClientIP)
}

// LoginStart checks email and password and emails a one-time code; the returned handle names the attempt.
func (f *Flows) LoginStart(ctx context.Context, email, password, captchaToken string) (string, error) {
	email, err := normalize(email)
	if err != nil {
		return "", err
	}
	if err := f.guard(ctx, "login", email, captchaToken); err != nil {
		return "", err
	}
	user, err := dbq.New().UserGetByEmail(ctx, f.Pool, email)
	if errors.Is(err, pgx.ErrNoRows) {
		_ = auth.VerifyPassword(dummyHash, password)
		return "", errBadLogin
	}
	if err != nil {
		return "", err
	}
	if user.PasswordHash == nil || auth.VerifyPassword(*user.PasswordHash, password) != nil {
		return "", errBadLogin
	}
	var handle, code string
	err = db.WithTx(ctx, f.Pool, func(ctx context.Context, tx pgx.Tx) error {
		handle, code, err = f.Challenges.Create(ctx, tx, NewChallenge{Kind: ChallengeLogin, UserID: user.ID, Email: email, TTL: EmailCodeTTL, WithCode: true})
		return err
	})
	if err != nil {
		return "", err
	}
	return handle, f.send(ctx, sysmail.Message{To: email, Subject: "Your Outflow sign-in code: " + code,
		Text: fmt.Sprintf("Your sign-in code is %s. It expires in 10 minutes and works once.\nIf you did not try to sign in, change your password.", code)})
}

// LoginConfirm redeems the emailed code and completes the sign-in, or asks for the second factor.
func (f *Flows) LoginConfirm(ctx context.Context, handle, code string) (SignIn, error) {
	if err := f.Limiter.Allow(ctx, "login-confirm:ip:"+reqctx.From(ctx).ClientIP, limitPerIP); err != nil {
		return SignIn{}, err
	}
	var out SignIn
	var email string
	err := db.WithTx(ctx, f.Pool, func(ctx context.Context, tx pgx.Tx) error {
		r, err := f.Challenges.Redeem(ctx, f.Pool, tx, handle, ChallengeLogin, code)
		if err != nil {
			return err
		}
		email = r.Email
		out, err = f.CompleteSignIn(ctx, tx, r.UserID, "password")
		return err
	})
	if err != nil {
		return SignIn{}, err
	}
	if out.Tokens != nil {
		f.alert(ctx, email)
	}
	return out, nil
}

// CompleteSignIn finishes any first factor (password + code, social identity): a user with 2FA gets a
// single-use pending token valid TwoFAPendingTTL, everyone else a session.
func (f *Flows) CompleteSignIn(ctx context.Context, tx pgx.Tx, userID uuid.UUID, provider string) (SignIn, error) {
	q := dbq.New()
	enabled, err := q.TwoFactorEnabled(ctx, tx, userID)
	if err != nil {
		return SignIn{}, err
	}
	if enabled {
		handle, _, err := f.Challenges.Create(ctx, tx, NewChallenge{Kind: ChallengeTwoFA, UserID: userID,
			Payload: map[string]string{"provider": provider}, TTL: TwoFAPendingTTL})
		if err != nil {
			return SignIn{}, err
		}
		return SignIn{PendingToken: handle}, nil
	}
	pair, err := f.StartSession(ctx, tx, userID, provider)
	if err != nil {
		return SignIn{}, err
	}
	return SignIn{Tokens: &pair}, nil
}

// StartSession opens a session in the user's most recent organization (or their first).
func (f *Flows) StartSession(ctx context.Context, tx pgx.Tx, userID uuid.UUID, provider string) (TokenPair, error) {
	q := dbq.New()
	user, err := q.UserGetByID(ctx, tx, userID)
	if err != nil {
		return TokenPair{}, err
	}
	memberships, err := q.UserMemberships(ctx, tx, userID)
	if err != nil {
		return TokenPair{}, err
	}
	org := uuid.Nil
	for _, m := range memberships {
		if org == uuid.Nil || (user.LastOrganizationID.Valid && m.OrganizationID == user.LastOrganizationID.UUID) {
			org = m.OrganizationID
		}
	}
	return f.Sessions.Start(ctx, tx, userID, org, provider)
}

// RegisterStart creates an account: with email verification it stores the pending registration and emails a
// code (the handle is returned); without, it creates the account and signs in at once.
func (f *Flows) RegisterStart(ctx context.Context, email, password, captchaToken string) (handle string, signIn *SignIn, err error) {
	email, err = normalize(email)
	if err != nil {
		return "", nil, err
	}
	if err := f.guard(ctx, "register", email, captchaToken); err != nil {
		return "", nil, err
	}
	if err := CheckPassword(password, email); err != nil {
		return "", nil, err
	}
	_, err = dbq.New().UserGetByEmail(ctx, f.Pool, email)
	if err == nil {
		return "", nil, apierror.Unauthorized("email_unavailable", "That email cannot be used to register. Sign in instead.")
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return "", nil, err
	}
	hash := auth.HashPassword(password)
	if !f.RequireEmailVerification {
		var out SignIn
		err := db.WithTx(ctx, f.Pool, func(ctx context.Context, tx pgx.Tx) error {
			userID, _, err := CreateAccount(ctx, tx, NewAccount{Email: email, PasswordHash: hash})
			if err != nil {
				return err
			}
			out, err = f.CompleteSignIn(ctx, tx, userID, "password")
			return err
		})
		if err != nil {
			return "", nil, err
		}
		return "", &out, nil
	}
	var code string
	err = db.WithTx(ctx, f.Pool, func(ctx context.Context, tx pgx.Tx) error {
		handle, code, err = f.Challenges.Create(ctx, tx, NewChallenge{Kind: ChallengeRegister, Email: email,
			Payload: map[string]string{"password_hash": hash}, TTL: EmailCodeTTL, WithCode: true})
		return err
	})
	if err != nil {
		return "", nil, err
	}
	return handle, nil, f.send(ctx, sysmail.Message{To: email, Subject: "Your Outflow verification code: " + code,
		Text: fmt.Sprintf("Your code to finish creating your Outflow account is %s. It expires in 10 minutes.", code)})
}

// RegisterConfirm redeems the emailed code and creates the account, its organization and trial.
func (f *Flows) RegisterConfirm(ctx context.Context, handle, code string) error {
	if err := f.Limiter.Allow(ctx, "register-confirm:ip:"+reqctx.From(ctx).ClientIP, limitPerIP); err != nil {
		return err
	}
	return db.WithTx(ctx, f.Pool, func(ctx context.Context, tx pgx.Tx) error {
		r, err := f.Challenges.Redeem(ctx, f.Pool, tx, handle, ChallengeRegister, code)
		if err != nil {
			return err
		}
		var p struct {
			PasswordHash string `json:"password_hash"`
		}
		if err := json.Unmarshal(r.Payload, &p); err != nil {
			return err
		}
		_, _, err = CreateAccount(ctx, tx, NewAccount{Email: r.Email, PasswordHash: p.PasswordHash, Verified: true})
		if errors.Is(err, ErrEmailTaken) {
			return apierror.Unauthorized("email_unavailable", "That email cannot be used to register. Sign in instead.")
		}
		return err
	})
}

// ResetStart emails a reset link when the address has an account, and behaves identically when it has not.
func (f *Flows) ResetStart(ctx context.Context, email, captchaToken string) error {
	email, err := normalize(email)
	if err != nil {
		return err
	}
	if err := f.guard(ctx, "reset", email, captchaToken); err != nil {
		return err
	}
	user, err := dbq.New().UserGetByEmail(ctx, f.Pool, email)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // no enumeration: same answer, no mail
	}
	if err != nil {
		return err
	}
	var handle string
	err = db.WithTx(ctx, f.Pool, func(ctx context.Context, tx pgx.Tx) error {
		handle, _, err = f.Challenges.Create(ctx, tx, NewChallenge{Kind: ChallengeReset, UserID: user.ID, Email: email, TTL: ResetTTL})
		return err
	})
	if err != nil {
		return err
	}
	link := f.AppURL + "/auth/reset-password?session=" + url.QueryEscape(handle)
	return f.send(ctx, sysmail.Message{To: email, Subject: "Reset your Outflow password",
		Text: "Open this link within 30 minutes to choose a new password (it works once):\n" + link +
			"\nReset session: " + handle + "\nIf you did not ask for this, ignore this message."})
}

// ResetConfirm sets a new password from a reset session and ends every session of the account.
func (f *Flows) ResetConfirm(ctx context.Context, handle, password, captchaToken string) error {
	if err := f.guard(ctx, "reset-confirm", "", captchaToken); err != nil {
		return err
	}
	return db.WithTx(ctx, f.Pool, func(ctx context.Context, tx pgx.Tx) error {
		r, err := f.Challenges.Redeem(ctx, f.Pool, tx, handle, ChallengeReset, "")
		if err != nil {
			return err
		}
		if err := CheckPassword(password, r.Email); err != nil {
			return err
		}
		q := dbq.New()
		if err := q.UserUpdatePassword(ctx, tx, dbq.UserUpdatePasswordParams{ID: r.UserID, PasswordHash: auth.HashPassword(password)}); err != nil {
			return err
		}
		return f.Sessions.RevokeAll(ctx, tx, r.UserID, uuid.Nil, "password reset")
	})
}

// Refresh rotates a refresh token, within the per-IP abuse limit.
func (f *Flows) Refresh(ctx context.Context, refreshToken string) (TokenPair, error) {
	if err := f.Limiter.Allow(ctx, "refresh:ip:"+reqctx.From(ctx).ClientIP, limitRefreshPerIP); err != nil {
		return TokenPair{}, err
	}
	return f.Sessions.Refresh(ctx, refreshToken)
}

// ChangePassword replaces a signed-in user's password and ends their other sessions.
func (f *Flows) ChangePassword(ctx context.Context, p *auth.Principal, current, next string) error {
	if err := f.Limiter.Allow(ctx, "password-change:account:"+p.UserID.String(), limitPerAccount); err != nil {
		return err
	}
	return db.WithTx(ctx, f.Pool, func(ctx context.Context, tx pgx.Tx) error {
		q := dbq.New()
		user, err := q.UserGetByID(ctx, tx, p.UserID)
		if err != nil {
			return err
		}
		if user.PasswordHash == nil || auth.VerifyPassword(*user.PasswordHash, current) != nil {
			return apierror.Unauthorized("invalid_credentials", "The current password is wrong.")
		}
		if err := CheckPassword(next, user.Email); err != nil {
			return err
		}
		if err := q.UserUpdatePassword(ctx, tx, dbq.UserUpdatePasswordParams{ID: p.UserID, PasswordHash: auth.HashPassword(next)}); err != nil {
			return err
		}
		return f.Sessions.RevokeAll(ctx, tx, p.UserID, p.CredentialID, "password changed")
	})
}

func (f *Flows) send(ctx context.Context, m sysmail.Message) error {
	if err := f.Mail.Send(ctx, m); err != nil {
		return apierror.Unavailable("mail_unavailable", "We could not send the email. Try again in a moment.").WithCause(err)
	}
	return nil
}

// AlertSignIn tells a user about a completed sign-in (social and passkey flows call it after committing).
func (f *Flows) AlertSignIn(ctx context.Context, userID uuid.UUID) {
	user, err := dbq.New().UserGetByID(ctx, f.Pool, userID)
	if err != nil {
		f.Logger.WarnContext(ctx, "new sign-in alert not sent", slog.String("error", err.Error()))
		return
	}
	f.alert(ctx, user.Email)
}

// alert tells the owner of email about a new sign-in; failures are logged, never fatal.
func (f *Flows) alert(ctx context.Context, email string) {
	info := reqctx.From(ctx)
	browser, os := describeAgent(info.UserAgent)
	where := strings.TrimSpace(strings.Join([]string{browser, os}, " on "))
	err := f.Mail.Send(ctx, sysmail.Message{To: email, Subject: "New sign-in to your Outflow account",
		Text: fmt.Sprintf("Your account was signed in to from %s (IP %s) at %s UTC.\nIf this was not you, change your password and end your other sessions.",
			where, info.ClientIP, time.Now().UTC().Format("2006-01-02 15:04"))})
	if err != nil {
		f.Logger.WarnContext(ctx, "new sign-in alert not sent", slog.String("error", err.Error()))
	}
}

// ErrEmailTaken is returned by CreateAccount when the email already has an account.
var ErrEmailTaken = errors.New("accounts: email already registered")

// NewAccount describes a first sign-up.
type NewAccount struct {
	Email        string
	PasswordHash string
	FirstName    string
	LastName     string
	// Verified marks the email as proven (code confirmed, or asserted by an identity provider).
	Verified bool
}

// CreateAccount creates the user, their own organization (named after them) with a trial, and the owner
// membership, in tx.
func CreateAccount(ctx context.Context, tx pgx.Tx, n NewAccount) (userID, orgID uuid.UUID, err error) {
	q := dbq.New()
	if _, err := q.UserGetByEmail(ctx, tx, n.Email); err == nil {
		return uuid.Nil, uuid.Nil, ErrEmailTaken
	}
	userID, _ = uuid.NewV7()
	var hash *string
	if n.PasswordHash != "" {
		hash = &n.PasswordHash
	}
	if _, err := q.UserCreate(ctx, tx, dbq.UserCreateParams{ID: userID, Email: n.Email, PasswordHash: derefOr(hash), FirstName: n.FirstName, LastName: n.LastName}); err != nil {
		if strings.Contains(err.Error(), "users_email_key") {
			return uuid.Nil, uuid.Nil, ErrEmailTaken
		}
		return uuid.Nil, uuid.Nil, fmt.Errorf("create user: %w", err)
	}
	if n.Verified {
		if err := q.UserMarkEmailVerified(ctx, tx, userID); err != nil {
			return uuid.Nil, uuid.Nil, err
		}
	}
	orgID, _ = uuid.NewV7()
	name := strings.TrimSpace(n.FirstName + " " + n.LastName)
	if name == "" {
		name = n.Email
	}
	err = db.WithOrgTx(ctx, tx, orgID, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := q.OrganizationCreate(ctx, tx, dbq.OrganizationCreateParams{OrganizationID: orgID, Name: name + "'s workspace"}); err != nil {
			return err
		}
		if err := q.OrganizationStartTrial(ctx, tx, dbq.OrganizationStartTrialParams{OrganizationID: orgID, TrialEndsAt: time.Now().Add(TrialLength)}); err != nil {
			return err
		}
		return q.MembershipCreate(ctx, tx, dbq.MembershipCreateParams{OrganizationID: orgID, UserID: userID, Role: auth.RoleOwner})
	})
	if err != nil {
		return uuid.Nil, uuid.Nil, fmt.Errorf("create organization: %w", err)
	}
	return userID, orgID, q.UserSetLastOrganization(ctx, tx, dbq.UserSetLastOrganizationParams{ID: userID, OrganizationID: orgID})
}

func derefOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
