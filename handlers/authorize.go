package handlers

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/ogen-go/ogen/middleware"

	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// errMailboxNotFound answers a mailbox-scoped key naming a mailbox outside its list: the same 404 a foreign
// id gets, so the key learns nothing about mailboxes it may not use.
var errMailboxNotFound = apierror.NotFound("mailbox_not_found", "Mailbox not found.")

// Authorize is the ogen middleware that enforces Routes. It runs after the security handler has resolved
// the caller and after parameters are decoded, and before the handler: an operation without an entry is an
// internal error rather than an open door.
func Authorize(req middleware.Request, next middleware.Next) (middleware.Response, error) {
	r, ok := Routes[req.OperationName]
	if !ok || r.Access == 0 {
		return middleware.Response{}, apierror.Internal(fmt.Errorf("operation %s has no route requirement", req.OperationName))
	}
	if r.Access == auth.AccessPublic {
		return next(req)
	}
	p := auth.PrincipalFrom(req.Context)
	if err := admit(p, req.OperationName, r); err != nil {
		return middleware.Response{}, err
	}
	if r.MailboxParam != "" {
		for _, id := range mailboxIDs(req.Params, r.MailboxParam) {
			if !p.MayUseMailbox(id) {
				return middleware.Response{}, errMailboxNotFound
			}
		}
	}
	return next(req)
}

// admit checks the caller against r: sessions by their role in the selected organization, API keys and
// OAuth tokens by their scopes.
func admit(p *auth.Principal, op string, r auth.Requirement) error {
	if p == nil {
		return apierror.Unauthorized("missing_credential", "Send a credential as `Authorization: Bearer <token>`.")
	}
	if !p.IsSession() {
		if r.Access == auth.AccessSession {
			return errSessionRequired
		}
		if missing := r.Scope &^ p.Permissions; missing != 0 {
			return missingScope(missing)
		}
		return nil
	}
	if r.OrgPermission != 0 || !noOrganization[op] {
		if _, err := callerOrganization(p); err != nil {
			return err
		}
	}
	return requireOrgPermission(p, r.OrgPermission)
}

// missingScope names the scopes a credential lacks, so the fix (a key with those scopes) is obvious.
func missingScope(missing auth.Permission) *apierror.Error {
	names := missing.Names()
	noun := "scope"
	if len(names) > 1 {
		noun = "scopes"
	}
	return apierror.Forbidden("missing_scope", fmt.Sprintf("This credential lacks the %s %s.", strings.Join(names, ", "), noun))
}

// mailboxIDs reads the mailbox ids a request names in param (path first, then query): a uuid, an optional
// uuid, or a comma-separated list. Values that are not uuids are left to the handler to refuse.
func mailboxIDs(params middleware.Parameters, param string) []uuid.UUID {
	v, ok := params.Path(param)
	if !ok {
		if v, ok = params.Query(param); !ok {
			return nil
		}
	}
	switch v := v.(type) {
	case uuid.UUID:
		return []uuid.UUID{v}
	case []uuid.UUID:
		return v
	case interface{ Get() (uuid.UUID, bool) }:
		if id, ok := v.Get(); ok {
			return []uuid.UUID{id}
		}
	case string:
		return parseMailboxList(v)
	case interface{ Get() (string, bool) }:
		if s, ok := v.Get(); ok {
			return parseMailboxList(s)
		}
	}
	return nil
}

// parseMailboxList reads the uuids of a comma-separated list, skipping anything else.
func parseMailboxList(s string) []uuid.UUID {
	var out []uuid.UUID
	for part := range strings.SplitSeq(s, ",") {
		if id, err := uuid.Parse(strings.TrimSpace(part)); err == nil {
			out = append(out, id)
		}
	}
	return out
}
