package auth

import (
	"fmt"
	"strings"
)

// Category groups permissions on the key-creation screen: what may only read, what changes data, what acts
// on many records at once, and what reaches outside the workspace (sending, keys, webhooks, provisioning).
type Category string

// The catalog's categories.
const (
	CategoryRead    Category = "read"
	CategoryWrite   Category = "write"
	CategoryBulk    Category = "bulk"
	CategorySpecial Category = "special"
)

// CatalogEntry describes one scope bit as GET /api-keys/permissions publishes it.
type CatalogEntry struct {
	// Permission is the bit.
	Permission Permission
	// Name is the upper-case scope name of part 1, rule 4; OAuth scopes are the same names lowercased.
	Name string
	// Description says what the scope allows, for people choosing a key's permissions.
	Description string
	// Category groups the entry.
	Category Category
}

// Catalog lists every scope bit in bit order. Its order and values are part of the API: append only.
var Catalog = []CatalogEntry{
	{ReadEmails, "READ_EMAILS", "Read mailboxes, their settings, warmup and sync state.", CategoryRead},
	{WriteEmails, "WRITE_EMAILS", "Connect, change, pause and remove mailboxes.", CategoryWrite},
	{ReadCampaigns, "READ_CAMPAIGNS", "Read campaigns, their steps, leads and logs.", CategoryRead},
	{WriteCampaigns, "WRITE_CAMPAIGNS", "Create, change and delete campaigns and their steps.", CategoryWrite},
	{SendCampaigns, "SEND_CAMPAIGNS", "Preflight campaigns and send their real test emails.", CategorySpecial},
	{ReadContacts, "READ_CONTACTS", "Search, read and export contacts, segments and suppressions.", CategoryRead},
	{WriteContacts, "WRITE_CONTACTS", "Create, change and delete contacts, segments, labels and suppressions.", CategoryWrite},
	{BulkContacts, "BULK_CONTACTS", "Import contacts and act on many contacts at once.", CategoryBulk},
	{ReadUnibox, "READ_UNIBOX", "Read the unified inbox.", CategoryRead},
	{WriteUnibox, "WRITE_UNIBOX", "Label, move, mark and delete inbox messages.", CategoryWrite},
	{ReadCRM, "READ_CRM", "Read deals, pipelines, tasks and notes.", CategoryRead},
	{WriteCRM, "WRITE_CRM", "Create, change and delete deals, pipelines, tasks and notes.", CategoryWrite},
	{ReadAnalytics, "READ_ANALYTICS", "Read campaign, mailbox and deliverability analytics.", CategoryRead},
	{ReadAuditLogs, "READ_AUDIT_LOGS", "Read the organization's audit log.", CategoryRead},
	{APIKeys, "API_KEYS", "Manage API keys and OAuth applications.", CategorySpecial},
	{Webhooks, "WEBHOOKS", "Manage webhook endpoints and inspect their deliveries.", CategorySpecial},
	{Integrations, "INTEGRATIONS", "Manage integrations, app connections and automations.", CategorySpecial},
	{RealtimeSubscribe, "REALTIME_SUBSCRIBE", "Subscribe to the realtime event stream.", CategoryRead},
	{ReadRuns, "READ_RUNS", "Read agent runs and their event streams.", CategoryRead},
	{WriteRuns, "WRITE_RUNS", "Create and cancel agent runs.", CategoryWrite},
	{ExecuteRuns, "EXECUTE_RUNS", "Launch agent runs (under the credential's agent policy).", CategorySpecial},
	{SendDirectEmail, "SEND_DIRECT_EMAIL", "Send one-off emails from a mailbox.", CategorySpecial},
	{SendInboxReply, "SEND_INBOX_REPLY", "Reply to inbox conversations.", CategorySpecial},
	{WriteEvents, "WRITE_EVENTS", "Record product events for contacts.", CategoryWrite},
	{ManageMailboxProvisioning, "MANAGE_MAILBOX_PROVISIONING", "Order and release managed mailboxes.", CategorySpecial},
}

// ReadOnly is the preset holding every read-category scope.
var ReadOnly = func() Permission {
	var p Permission
	for _, e := range Catalog {
		if e.Category == CategoryRead {
			p |= e.Permission
		}
	}
	return p
}()

// Valid reports whether p holds only defined bits.
func (p Permission) Valid() bool { return p&^FullAccess == 0 }

// Names lists the scope names of p in bit order.
func (p Permission) Names() []string {
	var out []string
	for _, e := range Catalog {
		if p&e.Permission != 0 {
			out = append(out, e.Name)
		}
	}
	return out
}

// Scopes lists p as OAuth scopes: the names lowercased (part 1, rule 5).
func (p Permission) Scopes() []string {
	names := p.Names()
	for i, n := range names {
		names[i] = strings.ToLower(n)
	}
	return names
}

// ParseScopes reads OAuth scope names (case-insensitive) into bits; an unknown name is an error naming it.
func ParseScopes(names []string) (Permission, error) {
	var p Permission
	for _, n := range names {
		found := false
		for _, e := range Catalog {
			if strings.EqualFold(n, e.Name) {
				p |= e.Permission
				found = true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown scope %q", n)
		}
	}
	return p, nil
}
