package orgs

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/sysmail"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// InvitationTTL is how long an emailed invitation can be accepted.
const InvitationTTL = 7 * 24 * time.Hour

// invitationTokenPrefix marks invitation tokens so they are never mistaken for other server-issued secrets.
const invitationTokenPrefix = "ofinv_"

var (
	errInvitationNotFound = apierror.NotFound("not_found", "Invitation not found, revoked or expired.")
	errAlreadyMember      = apierror.Conflict("already_member", "That person is already a member of this organization.")
)

// Invitations invites people by email and lets them join.
type Invitations struct {
	pool   *pgxpool.Pool
	mail   sysmail.Sender
	appURL string
}

// NewInvitations builds the invitation service; links in the emails point at appURL.
func NewInvitations(pool *pgxpool.Pool, sender sysmail.Sender, appURL string) *Invitations {
	return &Invitations{pool: pool, mail: sender, appURL: strings.TrimRight(appURL, "/")}
}

// Invite records an invitation of email to the organization of tx with role r and emails the invitee a link
// carrying a single-use token; only the token's hash is kept. caller is the member inviting, already allowed to
// manage the team; only an owner invites an owner. The mail goes out before the transaction commits, so an
// invitation that could not be sent is not left pending.
func (iv *Invitations) Invite(ctx context.Context, tx pgx.Tx, caller *auth.Principal, email string, r Role) (dbq.InvitationCreateRow, error) {
	org, _ := db.OrgID(ctx)
	q := dbq.New()
	email, err := invitee(email)
	if err != nil {
		return dbq.InvitationCreateRow{}, err
	}
	if r.IsOwner() && caller.Role != auth.RoleOwner {
		return dbq.InvitationCreateRow{}, apierror.Forbidden("owner_required", "Only an owner can invite an owner.")
	}
	roleName, err := customRoleName(ctx, tx, org, r)
	if err != nil {
		return dbq.InvitationCreateRow{}, err
	}
	member, err := q.MemberExistsByEmail(ctx, tx, dbq.MemberExistsByEmailParams{OrganizationID: org, Email: email})
	if err != nil {
		return dbq.InvitationCreateRow{}, err
	}
	if member {
		return dbq.InvitationCreateRow{}, errAlreadyMember
	}
	if err := q.InvitationExpireStale(ctx, tx, dbq.InvitationExpireStaleParams{OrganizationID: org, Email: email}); err != nil {
		return dbq.InvitationCreateRow{}, err
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	token := invitationTokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	id, err := uuid.NewV7()
	if err != nil {
		return dbq.InvitationCreateRow{}, err
	}
	inv, err := q.InvitationCreate(ctx, tx, dbq.InvitationCreateParams{
		OrganizationID: org, ID: id, Email: email, Role: r.Builtin,
		CustomRoleID: uuid.NullUUID{UUID: r.Custom, Valid: r.Custom != uuid.Nil},
		TokenHash:    hashInvitationToken(token), InvitedBy: caller.UserID, ExpiresAt: time.Now().Add(InvitationTTL),
	})
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.ConstraintName == "organization_invitations_pending" {
		return dbq.InvitationCreateRow{}, apierror.Conflict("invitation_pending",
			"An invitation is already pending for this email; revoke it to send a new one.")
	}
	if err != nil {
		return dbq.InvitationCreateRow{}, err
	}
	if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "invitation.created", EntityType: audit.EntityInvitation, EntityID: id.String(),
		Metadata: map[string]any{"email": email, "role": r.Stored()}}); err != nil {
		return dbq.InvitationCreateRow{}, err
	}
	if err := iv.send(ctx, tx, org, caller.UserID, email, token, roleLabel(roleName, r)); err != nil {
		return dbq.InvitationCreateRow{}, err
	}
	return inv, nil
}

// roleLabel names the role in the invitation email: the custom role's name, else the built-in role.
func roleLabel(custom string, r Role) string {
	if custom != "" {
		return custom
	}
	return r.Builtin
}

// send emails the invitation link.
func (iv *Invitations) send(ctx context.Context, tx pgx.Tx, org, inviterID uuid.UUID, email, token, role string) error {
	q := dbq.New()
	o, err := q.OrganizationGet(ctx, tx, org)
	if err != nil {
		return err
	}
	inviter, err := q.UserGetByID(ctx, tx, inviterID)
	if err != nil {
		return err
	}
	who := strings.TrimSpace(inviter.FirstName + " " + inviter.LastName)
	if who == "" {
		who = inviter.Email
	}
	link := iv.appURL + "/invitations/accept?token=" + url.QueryEscape(token)
	err = iv.mail.Send(ctx, sysmail.Message{To: email, Subject: fmt.Sprintf("%s invited you to %s on Outflow", who, o.Name),
		Text: fmt.Sprintf("%s invited you to join %s on Outflow as %s.\nOpen this link within 7 days to accept (it works once, "+
			"signed in with this email address):\n%s\nInvitation token: %s\nIf you did not expect this, ignore this message.",
			who, o.Name, role, link, token)})
	if err != nil {
		return apierror.Unavailable("mail_unavailable", "We could not send the invitation email. Try again in a moment.").WithCause(err)
	}
	return nil
}

// Accept redeems an invitation token for the signed-in caller, whose account must own the invited address: it
// makes them a member with the invited role and returns the organization joined.
func (iv *Invitations) Accept(ctx context.Context, caller *auth.Principal, token string) (uuid.UUID, error) {
	q := dbq.New()
	ref, err := q.InvitationByToken(ctx, iv.pool, hashInvitationToken(token))
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, errInvitationNotFound
	}
	if err != nil {
		return uuid.Nil, err
	}
	err = db.WithOrgTx(ctx, iv.pool, ref.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		inv, err := q.InvitationGetForUpdate(ctx, tx, dbq.InvitationGetForUpdateParams(ref))
		if errors.Is(err, pgx.ErrNoRows) {
			return errInvitationNotFound
		}
		if err != nil {
			return err
		}
		if inv.Status != "pending" {
			return errInvitationNotFound
		}
		user, err := q.UserGetByID(ctx, tx, caller.UserID)
		if err != nil {
			return err
		}
		if user.Email != inv.Email {
			return apierror.Forbidden("invitation_email_mismatch",
				"This invitation was sent to another email address; sign in with that address to accept it.")
		}
		memberships, err := q.UserMemberships(ctx, tx, caller.UserID)
		if err != nil {
			return err
		}
		for _, m := range memberships {
			if m.OrganizationID == ref.OrganizationID {
				return errAlreadyMember
			}
		}
		if len(memberships) >= int(user.MaxOrganizations) {
			return apierror.Forbidden("max_organizations_reached",
				fmt.Sprintf("Your account can belong to at most %d organizations; leave one first.", user.MaxOrganizations))
		}
		r := Role{Builtin: inv.Role}
		if inv.CustomRoleID.Valid {
			r.Custom = inv.CustomRoleID.UUID
		}
		if err := q.MembershipCreate(ctx, tx, dbq.MembershipCreateParams{OrganizationID: ref.OrganizationID, UserID: caller.UserID, Role: r.Stored()}); err != nil {
			return db.Classify(err, "Membership")
		}
		if err := q.InvitationAccept(ctx, tx, dbq.InvitationAcceptParams(ref)); err != nil {
			return err
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionAccept, Event: "invitation.accepted", EntityType: audit.EntityInvitation, EntityID: ref.ID.String(),
			Metadata: map[string]any{"email": inv.Email, "role": r.Stored(), "user_id": caller.UserID.String()}})
	})
	if err != nil {
		return uuid.Nil, err
	}
	return ref.OrganizationID, nil
}

// Revoke ends a pending invitation of the organization of tx: its token stops working at once. An accepted
// invitation cannot be revoked (remove the member instead); revoking a settled one changes nothing.
func Revoke(ctx context.Context, tx pgx.Tx, id uuid.UUID) error {
	org, _ := db.OrgID(ctx)
	q := dbq.New()
	inv, err := q.InvitationGetForUpdate(ctx, tx, dbq.InvitationGetForUpdateParams{OrganizationID: org, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return apierror.NotFound("not_found", "Invitation not found.")
	}
	if err != nil {
		return err
	}
	switch inv.Status {
	case "accepted":
		return apierror.Conflict("invitation_accepted", "The invitation was already accepted; remove the member instead.")
	case "revoked":
		return nil
	}
	if err := q.InvitationRevoke(ctx, tx, dbq.InvitationRevokeParams{OrganizationID: org, ID: id}); err != nil {
		return err
	}
	return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionRevoke, Event: "invitation.revoked", EntityType: audit.EntityInvitation, EntityID: id.String(),
		Metadata: map[string]any{"email": inv.Email}})
}

// invitee checks and lowercases the invited address.
func invitee(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	addr, err := mail.ParseAddress(raw)
	if err != nil || addr.Address != raw || len(raw) > 320 {
		return "", apierror.BadRequest("invalid_email", "Give a valid email address to invite.")
	}
	return strings.ToLower(raw), nil
}

func hashInvitationToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}
