package handlers

import (
	"context"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/avatar"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// Profile implements the signed-in person's own profile: /auth/me, names, onboarding and the avatar.
type Profile struct {
	pool      *pgxpool.Pool
	avatars   avatar.Store
	publicURL string
	queries   *dbq.Queries
}

// NewProfile builds the profile handlers; avatars keeps uploaded pictures, served under publicURL +
// avatar.URLPath.
func NewProfile(pool *pgxpool.Pool, avatars avatar.Store, publicURL string) *Profile {
	return &Profile{pool: pool, avatars: avatars, publicURL: strings.TrimRight(publicURL, "/"), queries: dbq.New()}
}

// AuthGetMe returns the caller's profile. roles holds the caller's role ids in the selected organization:
// custom roles have ids, the built-in owner, admin and member roles are names and so add none. The folder,
// tag and category lists are the selected organization's label registries (empty without one).
func (h *Profile) AuthGetMe(ctx context.Context) (*api.User, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	u, err := h.queries.UserGetByID(ctx, h.pool, p.UserID)
	if err != nil {
		return nil, db.Classify(err, "User")
	}
	roles := []uuid.UUID{}
	if id, err := uuid.Parse(p.Role); err == nil {
		roles = append(roles, id)
	}
	out := &api.User{
		ID: u.ID, FirstName: u.FirstName, LastName: u.LastName, Email: u.Email,
		AvatarURL: optNilString(u.AvatarUrl), Roles: roles, ReferralSource: optNilString(u.ReferralSource),
		MaxOrganizations: api.NewOptInt(int(u.MaxOrganizations)), FreeTrialUsed: api.NewOptBool(u.FreeTrialUsed),
		AdminPermissions: api.NewOptInt(int(u.AdminPermissions)), IsAdmin: u.AdminPermissions != 0,
		Folders: []api.UserLabelGroup{}, Tags: []api.UserLabelGroup{}, Categories: []api.UserLabelGroup{},
		CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt,
	}
	out.OnboardingCompletedAt.SetToNull()
	if u.OnboardingCompletedAt != nil {
		out.OnboardingCompletedAt.SetTo(*u.OnboardingCompletedAt)
	}
	if p.OrganizationID != uuid.Nil {
		err := db.WithOrgTx(ctx, h.pool, p.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
			labels, err := h.queries.LabelListAll(ctx, tx, p.OrganizationID)
			for _, l := range labels {
				g := api.UserLabelGroup{ID: api.NewOptUUID(l.ID), Name: api.NewOptString(l.Title)}
				switch l.Kind {
				case "folder":
					out.Folders = append(out.Folders, g)
				case "tag":
					out.Tags = append(out.Tags, g)
				default:
					out.Categories = append(out.Categories, g)
				}
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// optNilString maps an empty column to an explicit null.
func optNilString(s string) api.OptNilString {
	if s == "" {
		return api.OptNilString{Set: true, Null: true}
	}
	return api.NewOptNilString(s)
}

// maxNameLength is the longest first or last name, in characters.
const maxNameLength = 50

// personName trims a first or last name and checks it is 1 to 50 characters: the schema counts the raw value,
// and a name of spaces only would pass it.
func personName(field, v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" || utf8.RuneCountInString(v) > maxNameLength {
		return "", apierror.BadRequest("invalid_name", field+" must be 1 to 50 characters.")
	}
	return v, nil
}

// names checks both names of a request.
func names(first, last string) (string, string, error) {
	first, err := personName("first_name", first)
	if err != nil {
		return "", "", err
	}
	last, err = personName("last_name", last)
	return first, last, err
}

// AuthUpdateMe changes the caller's names.
func (h *Profile) AuthUpdateMe(ctx context.Context, req *api.UpdateProfileRequest, _ api.AuthUpdateMeParams) error {
	p, err := sessionCaller(ctx)
	if err != nil {
		return err
	}
	first, last, err := names(req.FirstName, req.LastName)
	if err != nil {
		return err
	}
	_, err = h.queries.ProfileUpdateName(ctx, h.pool, dbq.ProfileUpdateNameParams{FirstName: first, LastName: last, ID: p.UserID})
	return err
}

// AuthCompleteOnboarding saves the names and the survey and stamps the onboarding as complete.
func (h *Profile) AuthCompleteOnboarding(ctx context.Context, req *api.OnboardingCompleteRequest, _ api.AuthCompleteOnboardingParams) error {
	p, err := sessionCaller(ctx)
	if err != nil {
		return err
	}
	first, last, err := names(req.FirstName, req.LastName)
	if err != nil {
		return err
	}
	_, err = h.queries.ProfileCompleteOnboarding(ctx, h.pool, dbq.ProfileCompleteOnboardingParams{
		FirstName: first, LastName: last, ReferralSource: string(req.ReferralSource),
		OnboardingRole: string(req.Role.Or("")), OnboardingTeamSize: string(req.TeamSize.Or("")), ID: p.UserID,
	})
	return err
}

// AuthUploadAvatar stores a new avatar and points the profile at it; the previous file is deleted best effort.
func (h *Profile) AuthUploadAvatar(ctx context.Context, req *api.AvatarUploadMultipart, _ api.AuthUploadAvatarParams) (*api.AvatarUploadResult, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(req.File.File, avatar.MaxBytes+1))
	if err != nil {
		return nil, err
	}
	ext, err := avatar.Check(data)
	switch {
	case errors.Is(err, avatar.ErrTooLarge):
		return nil, apierror.BadRequest("avatar_too_large", "The avatar must be at most 2 MB.")
	case errors.Is(err, avatar.ErrTooManyPixels):
		return nil, apierror.BadRequest("avatar_dimensions_too_large", "The avatar must be at most 1024 x 1024 pixels.")
	case err != nil:
		return nil, apierror.BadRequest("avatar_not_image", "The avatar must be a PNG or JPG image.")
	}
	name := avatar.NewName(ext)
	if err := h.avatars.Put(ctx, name, data); err != nil {
		return nil, err
	}
	url := h.publicURL + avatar.URLPath + name
	old, err := h.queries.ProfileSetAvatar(ctx, h.pool, dbq.ProfileSetAvatarParams{AvatarUrl: url, ID: p.UserID})
	if err != nil {
		h.forget(ctx, name)
		return nil, db.Classify(err, "User")
	}
	h.forget(ctx, avatar.NameOf(old))
	return &api.AvatarUploadResult{AvatarURL: url}, nil
}

// AuthDeleteAvatar clears the caller's avatar; the stored file is deleted best effort.
func (h *Profile) AuthDeleteAvatar(ctx context.Context, _ api.AuthDeleteAvatarParams) error {
	p, err := sessionCaller(ctx)
	if err != nil {
		return err
	}
	old, err := h.queries.ProfileSetAvatar(ctx, h.pool, dbq.ProfileSetAvatarParams{AvatarUrl: "", ID: p.UserID})
	if err != nil {
		return db.Classify(err, "User")
	}
	h.forget(ctx, avatar.NameOf(old))
	return nil
}

// forget deletes a stored avatar file best effort: a file left behind costs disk, not correctness, and must
// not fail a request whose database change already committed.
func (h *Profile) forget(ctx context.Context, name string) {
	if name != "" {
		_ = h.avatars.Delete(context.WithoutCancel(ctx), name)
	}
}
