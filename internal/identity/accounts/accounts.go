// Package accounts creates the people and organizations that own everything else. Its first user is the
// self-hoster's: Bootstrap makes an owner, an organization and a full-access API key in one step, so a
// script or an agent can start using a fresh deployment without a browser.
package accounts

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/mail"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// BootstrapKeyName names the API key Bootstrap issues; a re-run replaces (revokes) the previous one.
const BootstrapKeyName = "bootstrap"

// BootstrapResult is what `outflow admin bootstrap` prints.
type BootstrapResult struct {
	UserID         uuid.UUID `json:"user_id"`
	OrganizationID uuid.UUID `json:"organization_id"`
	APIKey         string    `json:"api_key"`
	APIKeyID       uuid.UUID `json:"api_key_id"`
}

// Bootstrap makes sure an owner user with email and password owns an organization named orgName, and
// issues a fresh full-access API key for it. Re-running with the same arguments reuses the user and the
// organization and replaces the key; a different password for an existing user is refused rather than
// silently changed. Everything happens in one transaction.
func Bootstrap(ctx context.Context, pool *pgxpool.Pool, email, password, orgName string) (BootstrapResult, error) {
	email, err := normalizeEmail(email)
	if err != nil {
		return BootstrapResult{}, err
	}
	orgName = strings.TrimSpace(orgName)
	switch {
	case CheckPassword(password, email) != nil:
		return BootstrapResult{}, fmt.Errorf("password: %s", apierror.From(CheckPassword(password, email)).Message)
	case orgName == "" || len(orgName) > 255:
		return BootstrapResult{}, errors.New("organization name must be 1 to 255 characters")
	}

	q := dbq.New()
	var res BootstrapResult
	err = db.WithTx(ctx, pool, func(ctx context.Context, tx pgx.Tx) error {
		if err := q.AdvisoryXactLock(ctx, tx, lockKey("bootstrap:"+email)); err != nil {
			return err
		}
		user, err := q.UserGetByEmail(ctx, tx, email)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			id, _ := uuid.NewV7()
			user, err = q.UserCreate(ctx, tx, dbq.UserCreateParams{ID: id, Email: email, PasswordHash: auth.HashPassword(password)})
			if err != nil {
				return fmt.Errorf("create user: %w", err)
			}
		case err != nil:
			return fmt.Errorf("find user: %w", err)
		default:
			if user.PasswordHash == nil || auth.VerifyPassword(*user.PasswordHash, password) != nil {
				return fmt.Errorf("a user with email %s exists and the password does not match", email)
			}
		}
		res.UserID = user.ID

		org, err := ownedOrganization(ctx, tx, q, user.ID, orgName)
		if err != nil {
			return err
		}
		if org == uuid.Nil {
			org, _ = uuid.NewV7()
			err = db.WithOrgTx(ctx, tx, org, func(ctx context.Context, tx pgx.Tx) error {
				if _, err := q.OrganizationCreate(ctx, tx, dbq.OrganizationCreateParams{OrganizationID: org, Name: orgName}); err != nil {
					return fmt.Errorf("create organization: %w", err)
				}
				if err := q.MembershipCreate(ctx, tx, dbq.MembershipCreateParams{OrganizationID: org, UserID: user.ID, Role: "owner"}); err != nil {
					return fmt.Errorf("add owner: %w", err)
				}
				return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "organization.created", EntityType: audit.EntityOrganization,
					EntityID: org.String(), Metadata: map[string]any{"name": orgName, "via": "admin bootstrap"}})
			})
			if err != nil {
				return err
			}
		}
		res.OrganizationID = org

		return db.WithOrgTx(ctx, tx, org, func(ctx context.Context, tx pgx.Tx) error {
			if _, err := q.APIKeyRevokeByName(ctx, tx, dbq.APIKeyRevokeByNameParams{
				OrganizationID: org, UserID: user.ID, Name: BootstrapKeyName, Reason: "replaced by admin bootstrap",
			}); err != nil {
				return fmt.Errorf("revoke previous bootstrap key: %w", err)
			}
			key := auth.MintAPIKey()
			id, _ := uuid.NewV7()
			if _, err := q.APIKeyCreate(ctx, tx, dbq.APIKeyCreateParams{
				OrganizationID: org, ID: id, UserID: uuid.NullUUID{UUID: user.ID, Valid: true},
				Name: BootstrapKeyName, Description: "Full-access key issued by `outflow admin bootstrap`.",
				KeyHash: key.Hash, KeyPrefix: key.Prefix, KeySuffix: key.Suffix, Permissions: int64(auth.FullAccess),
			}); err != nil {
				return fmt.Errorf("create API key: %w", err)
			}
			res.APIKey, res.APIKeyID = key.Secret, id
			return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "api_key.created", EntityType: audit.EntityAPIKey, EntityID: id.String(),
				Metadata: map[string]any{"name": BootstrapKeyName, "key_prefix": key.Prefix, "via": "admin bootstrap"}})
		})
	})
	if err != nil {
		return BootstrapResult{}, err
	}
	return res, nil
}

// ownedOrganization finds the organization named name that userID owns, or uuid.Nil.
func ownedOrganization(ctx context.Context, tx pgx.Tx, q *dbq.Queries, userID uuid.UUID, name string) (uuid.UUID, error) {
	memberships, err := q.UserMemberships(ctx, tx, userID)
	if err != nil {
		return uuid.Nil, fmt.Errorf("list memberships: %w", err)
	}
	for _, m := range memberships {
		if m.Role != "owner" {
			continue
		}
		var found bool
		err := db.WithOrgTx(ctx, tx, m.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
			org, err := q.OrganizationGet(ctx, tx, m.OrganizationID)
			found = err == nil && org.Name == name
			return err
		})
		if err != nil {
			return uuid.Nil, fmt.Errorf("read organization: %w", err)
		}
		if found {
			return m.OrganizationID, nil
		}
	}
	return uuid.Nil, nil
}

// normalizeEmail accepts a bare address and returns it lowercased.
func normalizeEmail(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	addr, err := mail.ParseAddress(raw)
	if err != nil || addr.Address != raw || len(raw) > 320 {
		return "", fmt.Errorf("%q is not a valid email address", raw)
	}
	return strings.ToLower(raw), nil
}

func lockKey(s string) int64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return int64(h.Sum64())
}
