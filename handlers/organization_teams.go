package handlers

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// defaultTeamColor is the colour of a team created without one.
const defaultTeamColor = "#6b7280"

var teamColorRe = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// teamColor checks a colour is a #rrggbb hex value and lowercases it.
func teamColor(v string) (string, error) {
	if !teamColorRe.MatchString(v) {
		return "", apierror.BadRequest("invalid_color", "color must be a hex colour such as #3b82f6.")
	}
	return strings.ToLower(v), nil
}

// teamsOf maps teams with their members (rows of TeamMemberList, oldest addition first).
func teamsOf(teams []dbq.Team, members []dbq.TeamMemberListRow) []api.Team {
	byTeam := map[uuid.UUID][]api.TeamMember{}
	for _, m := range members {
		name := strings.TrimSpace(m.FirstName + " " + m.LastName)
		byTeam[m.TeamID] = append(byTeam[m.TeamID], api.TeamMember{UserID: m.UserID, Email: m.Email, Name: name, AddedAt: m.AddedAt})
	}
	out := make([]api.Team, len(teams))
	for i, t := range teams {
		ms := byTeam[t.ID]
		if ms == nil {
			ms = []api.TeamMember{}
		}
		out[i] = api.Team{ID: t.ID, OrganizationID: t.OrganizationID, Name: t.Name, Color: t.Color, Members: ms,
			CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	}
	return out
}

// teamGet reads one team with its members; an unknown id (or another organization's) is a 404.
func (h *Organizations) teamGet(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (*api.Team, error) {
	t, err := h.queries.TeamGet(ctx, tx, dbq.TeamGetParams{OrganizationID: org, ID: id})
	if err != nil {
		return nil, db.Classify(err, "Team")
	}
	members, err := h.queries.TeamMemberList(ctx, tx, dbq.TeamMemberListParams{OrganizationID: org, TeamID: uuid.NullUUID{UUID: id, Valid: true}})
	if err != nil {
		return nil, err
	}
	return &teamsOf([]dbq.Team{t}, members)[0], nil
}

// teamWriteError maps a failed team write; the name is unique per organization, whatever its case.
func teamWriteError(err error) error {
	return orgWriteError(err, "Team", "teams_name", "team_name_taken", "A team with this name already exists.")
}

// OrganizationsListTeams lists every team with its members, sorted by name.
func (h *Organizations) OrganizationsListTeams(ctx context.Context) (*api.TeamCollection, error) {
	org, err := teamCaller(ctx, auth.ReadCRM, "READ_CRM", 0)
	if err != nil {
		return nil, err
	}
	var out *api.TeamCollection
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		teams, err := h.queries.TeamList(ctx, tx, org)
		if err != nil {
			return err
		}
		members, err := h.queries.TeamMemberList(ctx, tx, dbq.TeamMemberListParams{OrganizationID: org})
		if err != nil {
			return err
		}
		out = &api.TeamCollection{Data: teamsOf(teams, members)}
		return nil
	})
	return out, err
}

// OrganizationsGetTeam returns one team with its members.
func (h *Organizations) OrganizationsGetTeam(ctx context.Context, params api.OrganizationsGetTeamParams) (*api.Team, error) {
	org, err := teamCaller(ctx, auth.ReadCRM, "READ_CRM", 0)
	if err != nil {
		return nil, err
	}
	var out *api.Team
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		out, err = h.teamGet(ctx, tx, org, params.ID)
		return err
	})
	return out, err
}

// OrganizationsCreateTeam creates a team without members.
func (h *Organizations) OrganizationsCreateTeam(ctx context.Context, req *api.TeamCreate, _ api.OrganizationsCreateTeamParams) (*api.Team, error) {
	org, err := teamCaller(ctx, auth.WriteCRM, "WRITE_CRM", auth.ManageTeam)
	if err != nil {
		return nil, err
	}
	name, err := orgName(req.Name)
	if err != nil {
		return nil, err
	}
	color, err := teamColor(req.Color.Or(defaultTeamColor))
	if err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var out *api.Team
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		t, err := h.queries.TeamCreate(ctx, tx, dbq.TeamCreateParams{OrganizationID: org, ID: id, Name: name, Color: color})
		if err != nil {
			return teamWriteError(err)
		}
		out = &teamsOf([]dbq.Team{t}, nil)[0]
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "team.created", EntityType: audit.EntityTeam, EntityID: id.String(),
			Metadata: map[string]any{"name": name, "color": color}})
	})
	return out, err
}

// OrganizationsUpdateTeam renames or recolours a team.
func (h *Organizations) OrganizationsUpdateTeam(ctx context.Context, req *api.TeamUpdate, params api.OrganizationsUpdateTeamParams) (*api.Team, error) {
	org, err := teamCaller(ctx, auth.WriteCRM, "WRITE_CRM", auth.ManageTeam)
	if err != nil {
		return nil, err
	}
	args := dbq.TeamUpdateParams{OrganizationID: org, ID: params.ID}
	changes := map[string]any{}
	if v, ok := req.Name.Get(); ok {
		name, err := orgName(v)
		if err != nil {
			return nil, err
		}
		args.Name, changes["name"] = &name, name
	}
	if v, ok := req.Color.Get(); ok {
		color, err := teamColor(v)
		if err != nil {
			return nil, err
		}
		args.Color, changes["color"] = &color, color
	}
	var out *api.Team
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if len(changes) > 0 {
			if _, err := h.queries.TeamUpdate(ctx, tx, args); err != nil {
				return teamWriteError(err)
			}
			if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "team.updated", EntityType: audit.EntityTeam, EntityID: params.ID.String(),
				Metadata: changes}); err != nil {
				return err
			}
		}
		out, err = h.teamGet(ctx, tx, org, params.ID)
		return err
	})
	return out, err
}

// OrganizationsDeleteTeam deletes a team and its memberships.
func (h *Organizations) OrganizationsDeleteTeam(ctx context.Context, params api.OrganizationsDeleteTeamParams) error {
	org, err := teamCaller(ctx, auth.WriteCRM, "WRITE_CRM", auth.ManageTeam)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		n, err := h.queries.TeamDelete(ctx, tx, dbq.TeamDeleteParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return err
		}
		if n == 0 {
			return apierror.NotFound("not_found", "Team not found.")
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "team.deleted", EntityType: audit.EntityTeam, EntityID: params.ID.String()})
	})
}

// OrganizationsAddTeamMember adds a member of the organization to a team.
func (h *Organizations) OrganizationsAddTeamMember(ctx context.Context, req *api.TeamAddMember, params api.OrganizationsAddTeamMemberParams) (*api.Team, error) {
	org, err := teamCaller(ctx, auth.WriteCRM, "WRITE_CRM", auth.ManageTeam)
	if err != nil {
		return nil, err
	}
	var out *api.Team
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := h.queries.TeamGet(ctx, tx, dbq.TeamGetParams{OrganizationID: org, ID: params.ID}); err != nil {
			return db.Classify(err, "Team")
		}
		_, err := h.queries.MemberGet(ctx, tx, dbq.MemberGetParams{OrganizationID: org, UserID: req.UserID})
		if errors.Is(err, pgx.ErrNoRows) {
			return apierror.BadRequest("not_a_member", "That user is not a member of this organization.")
		}
		if err != nil {
			return err
		}
		if err := h.queries.TeamMemberAdd(ctx, tx, dbq.TeamMemberAddParams{OrganizationID: org, TeamID: params.ID, UserID: req.UserID}); err != nil {
			return orgWriteError(err, "Team member", "team_members_pkey", "already_in_team", "That user is already in the team.")
		}
		if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "team_member.added", EntityType: audit.EntityTeam, EntityID: params.ID.String(),
			Metadata: map[string]any{"user_id": req.UserID.String()}}); err != nil {
			return err
		}
		out, err = h.teamGet(ctx, tx, org, params.ID)
		return err
	})
	return out, err
}

// OrganizationsRemoveTeamMember takes a user out of a team; they stay in the organization.
func (h *Organizations) OrganizationsRemoveTeamMember(ctx context.Context, params api.OrganizationsRemoveTeamMemberParams) error {
	org, err := teamCaller(ctx, auth.WriteCRM, "WRITE_CRM", auth.ManageTeam)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		n, err := h.queries.TeamMemberRemove(ctx, tx, dbq.TeamMemberRemoveParams{OrganizationID: org, TeamID: params.ID, UserID: params.UserId})
		if err != nil {
			return err
		}
		if n == 0 {
			return apierror.NotFound("not_found", "Team or team member not found.")
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "team_member.removed", EntityType: audit.EntityTeam, EntityID: params.ID.String(),
			Metadata: map[string]any{"user_id": params.UserId.String()}})
	})
}
