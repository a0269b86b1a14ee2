package handlers

import (
	"context"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/agents/approvals"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// maxApprovalList is how many approvals GET /approvals answers, newest first: the contract has no paging,
// and a person reviews the recent ones (each expires within 30 minutes).
const maxApprovalList = 1000

// Approvals serves the actions held for a person (sessions of members who manage campaigns): the list and
// the decision.
type Approvals struct {
	pool      *pgxpool.Pool
	approvals *approvals.Service
	now       func() time.Time
}

// NewApprovals builds the approval operations over the service that decides them.
func NewApprovals(pool *pgxpool.Pool, s *approvals.Service) *Approvals {
	return &Approvals{pool: pool, approvals: s, now: time.Now}
}

// ApprovalsList lists the organization's approvals, newest first; a pending one whose time ran out reads
// expired.
func (h *Approvals) ApprovalsList(ctx context.Context) (*api.ApprovalsListOK, error) {
	_, org, err := managerCaller(ctx, auth.ManageCampaigns)
	if err != nil {
		return nil, err
	}
	var rows []dbq.Approval
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err = approvals.List(ctx, tx, org, maxApprovalList)
		return err
	})
	if err != nil {
		return nil, err
	}
	now := h.now()
	out := &api.ApprovalsListOK{Data: make([]api.SendApproval, len(rows))}
	for i, r := range rows {
		out.Data[i] = h.approvalOf(r, now)
	}
	return out, nil
}

// ApprovalsDecide approves (acting at once, through the hard gates, with the requester's scope) or denies a
// pending approval; see approvals.Service.Decide for the 404 and 409 answers.
func (h *Approvals) ApprovalsDecide(ctx context.Context, req *api.ApprovalsDecideReq, params api.ApprovalsDecideParams) (*api.SendApproval, error) {
	p, _, err := managerCaller(ctx, auth.ManageCampaigns)
	if err != nil {
		return nil, err
	}
	now := h.now()
	a, err := h.approvals.Decide(ctx, p, params.ID, req.Decision == api.ApprovalsDecideReqDecisionApproved, req.Reason.Value, now)
	if err != nil {
		return nil, err
	}
	out := h.approvalOf(a, now)
	return &out, nil
}

// approvalOf maps a stored approval for the API as of now.
func (h *Approvals) approvalOf(a dbq.Approval, now time.Time) api.SendApproval {
	out := api.SendApproval{ID: api.NewOptUUID(a.ID), ActionType: api.NewOptSendApprovalActionType(api.SendApprovalActionType(a.ActionType)),
		Reasons: a.Reasons, Status: api.NewOptSendApprovalStatus(api.SendApprovalStatus(approvals.StatusAt(a, now))),
		RequestedBy: api.NewOptSendApprovalRequestedBy(api.SendApprovalRequestedBy{Kind: api.SendApprovalRequestedByKind(a.CredentialKind),
			CredentialID: a.CredentialID}),
		DecisionReason: api.NewOptString(a.DecisionReason), ApprovalURL: approvalLink(h.approvals.URL(a.ID)),
		CreatedAt: api.NewOptDateTime(a.CreatedAt), ExpiresAt: api.NewOptDateTime(a.ExpiresAt)}
	if a.RunID.Valid {
		out.RunID = api.NewOptUUID(a.RunID.UUID)
	}
	if a.RequestedByUserID.Valid {
		out.RequestedBy.Value.UserID = api.NewOptUUID(a.RequestedByUserID.UUID)
	}
	if a.DecidedBy.Valid {
		out.DecidedBy = api.NewOptUUID(a.DecidedBy.UUID)
	}
	if a.DecidedAt != nil {
		out.DecidedAt = api.NewOptDateTime(*a.DecidedAt)
	}
	if a.ExecutedAt != nil {
		out.ExecutedAt = api.NewOptDateTime(*a.ExecutedAt)
	}
	if m, ok := objectAPI[api.SendApprovalPayload](a.Payload); ok {
		out.Payload = api.NewOptSendApprovalPayload(m)
	}
	if m, ok := objectAPI[api.SendApprovalResult](a.Result); ok {
		out.Result = api.NewOptSendApprovalResult(m)
	}
	return out
}

// approvalLink is an approval's web app link as the contract's uri type.
func approvalLink(raw string) api.OptURI {
	u, err := url.Parse(raw)
	if err != nil {
		return api.OptURI{}
	}
	return api.NewOptURI(*u)
}
