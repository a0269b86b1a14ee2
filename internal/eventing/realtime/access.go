package realtime

import (
	"github.com/google/uuid"

	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// sessionPermission maps an event family's scope (events.Info.Scope) to the organization permission a
// signed-in member needs to receive it: the permission of the API routes that read the same data.
var sessionPermission = map[auth.Permission]auth.OrgPermission{
	auth.ReadCampaigns:     auth.ViewCampaigns,
	auth.ReadEmails:        auth.ViewCampaigns, // as the mailbox read routes
	auth.ReadContacts:      auth.ViewContacts,
	auth.ReadUnibox:        auth.AccessUnibox,
	auth.ReadCRM:           auth.ViewContacts,
	auth.ReadAuditLogs:     auth.ViewAnalytics, // as the audit-log list
	auth.Integrations:      auth.UseIntegrations,
	auth.RealtimeSubscribe: 0, // custom.event: every member who may connect
}

// admit decides before the upgrade whether p may open a realtime connection: API keys and OAuth tokens need
// REALTIME_SUBSCRIBE, sessions membership of the selected organization.
func admit(p *auth.Principal) error {
	if p == nil {
		return apierror.Unauthorized("missing_credential",
			"Send a credential as `Authorization: Bearer <token>` or as the WebSocket subprotocol `bearer.<token>` beside `"+Subprotocol+"`.")
	}
	if p.IsSession() {
		if p.OrganizationID == uuid.Nil {
			return apierror.Forbidden("not_a_member",
				"Realtime needs membership of an organization: select one with X-Organization-Id or ?organization_id=.")
		}
		return nil
	}
	if p.OrganizationID == uuid.Nil {
		return apierror.Forbidden("not_a_member", "This credential belongs to no organization.")
	}
	if !p.Permissions.Has(auth.RealtimeSubscribe) {
		return apierror.Forbidden("missing_scope", "This credential lacks the REALTIME_SUBSCRIBE scope.")
	}
	return nil
}

// mayReceive reports whether p may see e: the event's family scope for keys and OAuth tokens (with a
// mailbox-scoped key also limited to its own mailboxes' events), the mapped organization permission for
// sessions.
func mayReceive(p *auth.Principal, e *event) bool {
	if !e.known || e.org != p.OrganizationID {
		return false
	}
	if p.IsSession() {
		need, ok := sessionPermission[e.info.Scope]
		return ok && p.OrgPermissions.Has(need)
	}
	if e.info.Scope == 0 || !p.Permissions.Has(e.info.Scope) {
		return false
	}
	if e.EmailAccountID != uuid.Nil && !p.MayUseMailbox(e.EmailAccountID) {
		return false
	}
	return true
}

// maySubscribe checks a topic against p: only p's own organization, and for user topics only p's own user.
// Campaign, mailbox and bulk-operation ids are not looked up: events are routed only within p's
// organization, so another organization's id simply matches nothing. A mailbox-scoped key may name only its
// own mailboxes.
func maySubscribe(p *auth.Principal, kind string, id uuid.UUID) error {
	switch kind {
	case topicOrg:
		if id != p.OrganizationID {
			return refuse(codeForbiddenTopic, "A connection may only subscribe to its own organization (org:%s).", p.OrganizationID)
		}
	case topicUser:
		if p.UserID == uuid.Nil || id != p.UserID {
			return refuse(codeForbiddenTopic, "A connection may only subscribe to its own user topic.")
		}
	case topicAccount:
		if !p.MayUseMailbox(id) {
			return refuse(codeForbiddenTopic, "This key may not use that mailbox.")
		}
	}
	return nil
}
