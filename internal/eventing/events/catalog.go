package events

import "github.com/outflowhq/outflow/internal/identity/auth"

// Type names an event kind. Producers pass the constants below to Outbox.Emit, which refuses a type that is
// not in the catalog, so the catalog GET /webhooks/event-types publishes is every event that can ever be sent.
type Type string

// Category groups event types in the published catalog.
type Category string

// The catalog's categories.
const (
	CategoryCampaign       Category = "campaign"
	CategoryWarmup         Category = "warmup"
	CategoryDeliverability Category = "deliverability"
	CategoryInbox          Category = "inbox"
	CategoryMailbox        Category = "mailbox"
	CategoryContact        Category = "contact"
	CategoryCRM            Category = "crm"
	CategoryAutomation     Category = "automation"
	CategoryMeeting        Category = "meeting"
	CategoryTeamAndAccess  Category = "team_and_access"
	CategoryBulkOperations Category = "bulk_operations"
	CategoryWorkspace      Category = "workspace"
	CategoryDeveloper      Category = "developer"
	CategoryTest           Category = "test"
	CategoryAgents         Category = "agents"
)

// Every event type of part 1's catalog, then the agents family (approvals and runs) this service adds.
const (
	CampaignStarted               Type = "campaign.started"
	CampaignPaused                Type = "campaign.paused"
	CampaignCompleted             Type = "campaign.completed"
	CampaignCreated               Type = "campaign.created"
	CampaignUpdated               Type = "campaign.updated"
	CampaignDeleted               Type = "campaign.deleted"
	CampaignEmailSent             Type = "campaign.email_sent"
	CampaignEmailDelivered        Type = "campaign.email_delivered"
	CampaignEmailOpened           Type = "campaign.email_opened"
	CampaignEmailClicked          Type = "campaign.email_clicked"
	CampaignEmailBounced          Type = "campaign.email_bounced"
	CampaignReplyReceived         Type = "campaign.reply_received"
	CampaignUnsubscribed          Type = "campaign.unsubscribed"
	CampaignDeliverabilityWarning Type = "campaign.deliverability_warning"
	CampaignAction                Type = "campaign.action"
	WarmupEmailSent               Type = "warmup.email_sent"
	WarmupHealthChanged           Type = "warmup.health_changed"
	WarmupPlacementInSpam         Type = "warmup.placement_in_spam"
	WarmupQuarantined             Type = "warmup.quarantined"
	WarmupBlocked                 Type = "warmup.blocked"
	DeliverabilityBounce          Type = "deliverability.bounce"
	DeliverabilityComplaint       Type = "deliverability.complaint"
	InboxEmailReceived            Type = "inbox.email_received"
	InboxEmailUpdated             Type = "inbox.email_updated"
	InboxEmailDeleted             Type = "inbox.email_deleted"
	InboxReplyReceived            Type = "inbox.reply_received"
	MailboxConnected              Type = "email_account.connected"
	MailboxDisconnected           Type = "email_account.disconnected"
	MailboxRemoved                Type = "email_account.removed"
	MailboxError                  Type = "email_account.error"
	MailboxSynced                 Type = "email_account.synced"
	MailboxHealthChanged          Type = "email_account.health_changed"
	ContactCreated                Type = "contact.created"
	ContactUpdated                Type = "contact.updated"
	ContactDeleted                Type = "contact.deleted"
	FormSubmitted                 Type = "form.submitted"
	CRMDealCreated                Type = "crm.deal_created"
	CRMDealUpdated                Type = "crm.deal_updated"
	CRMDealDeleted                Type = "crm.deal_deleted"
	CRMTaskCreated                Type = "crm.task_created"
	CRMTaskUpdated                Type = "crm.task_updated"
	CRMNoteCreated                Type = "crm.note_created"
	CRMPipelineUpdated            Type = "crm.pipeline_updated"
	AutomationCreated             Type = "automation.created"
	AutomationUpdated             Type = "automation.updated"
	AutomationDeleted             Type = "automation.deleted"
	AutomationRun                 Type = "automation.run"
	MeetingBooked                 Type = "meeting.booked"
	MeetingRescheduled            Type = "meeting.rescheduled"
	MeetingCanceled               Type = "meeting.canceled"
	TeamMemberInvited             Type = "team.member_invited"
	TeamMemberRemoved             Type = "team.member_removed"
	RoleCreated                   Type = "role.created"
	RoleUpdated                   Type = "role.updated"
	RoleDeleted                   Type = "role.deleted"
	BulkOperationStarted          Type = "bulk_operation.started"
	BulkOperationCompleted        Type = "bulk_operation.completed"
	BulkOperationFailed           Type = "bulk_operation.failed"
	LeadSyncSourceUpdated         Type = "lead_sync_source.updated"
	SettingsUpdated               Type = "settings.updated"
	SubscriptionUpdated           Type = "subscription.updated"
	CustomEvent                   Type = "custom.event"
	WebhookTest                   Type = "webhook.test"
	ApprovalRequested             Type = "approval.requested"
	ApprovalDecided               Type = "approval.decided"
	RunStateChanged               Type = "run.state_changed"
)

// Info describes one event type as the catalog publishes it.
type Info struct {
	Type        Type
	Category    Category
	Description string
	// Firehose events are high-volume and opt-in: an endpoint receives one only when it lists it.
	Firehose bool
	// Scope is what an OAuth app's grant must hold for the app's managed endpoints to receive the event
	// (part 1, the family table); 0 for webhook.test, which is never an app event.
	Scope auth.Permission
}

// Catalog is every event type, in the order part 1 lists them, the agents family last.
var Catalog = []Info{
	{CampaignStarted, CategoryCampaign, "A campaign started sending.", false, auth.ReadCampaigns},
	{CampaignPaused, CategoryCampaign, "A campaign was paused, by a person or automatically.", false, auth.ReadCampaigns},
	{CampaignCompleted, CategoryCampaign, "A campaign finished every lead's sequence.", false, auth.ReadCampaigns},
	{CampaignCreated, CategoryCampaign, "A campaign was created.", false, auth.ReadCampaigns},
	{CampaignUpdated, CategoryCampaign, "A campaign's settings changed.", false, auth.ReadCampaigns},
	{CampaignDeleted, CategoryCampaign, "A campaign was deleted.", false, auth.ReadCampaigns},
	{CampaignEmailSent, CategoryCampaign, "A campaign step was sent to a lead.", true, auth.ReadCampaigns},
	{CampaignEmailDelivered, CategoryCampaign, "The recipient's server accepted a campaign email.", true, auth.ReadCampaigns},
	{CampaignEmailOpened, CategoryCampaign, "A person opened a campaign email (automated opens are not counted).", true, auth.ReadCampaigns},
	{CampaignEmailClicked, CategoryCampaign, "A person clicked a link in a campaign email; carries url and link_label.", true, auth.ReadCampaigns},
	{CampaignEmailBounced, CategoryCampaign, "A campaign email bounced.", false, auth.ReadCampaigns},
	{CampaignReplyReceived, CategoryCampaign, "A lead replied to a campaign email (a person: out-of-office and automated answers are not replies); data adds reply_message_id, reply_email_account_id, replied_at, subject, lead_stopped, and the reply's intent (positive, negative, question or neutral) and confidence.", false, auth.ReadCampaigns},
	{CampaignUnsubscribed, CategoryCampaign, "A lead unsubscribed; source is one_click, link, reply or action.", false, auth.ReadCampaigns},
	{CampaignDeliverabilityWarning, CategoryCampaign, "A campaign's rolling bounce or complaint rate entered the early-warning band.", false, auth.ReadCampaigns},
	{CampaignAction, CategoryCampaign, "A campaign step ran an action.", false, auth.ReadCampaigns},
	{WarmupEmailSent, CategoryWarmup, "A warmup email was sent.", true, auth.ReadEmails},
	{WarmupHealthChanged, CategoryWarmup, "A mailbox's warmup health score changed band.", false, auth.ReadEmails},
	{WarmupPlacementInSpam, CategoryWarmup, "A warmup email landed in spam.", false, auth.ReadEmails},
	{WarmupQuarantined, CategoryWarmup, "A mailbox was quarantined from the warmup pool.", false, auth.ReadEmails},
	{WarmupBlocked, CategoryWarmup, "A mailbox was blocked from warmup.", false, auth.ReadEmails},
	{DeliverabilityBounce, CategoryDeliverability, "A bounce was recorded.", false, auth.ReadCampaigns},
	{DeliverabilityComplaint, CategoryDeliverability, "A spam complaint was recorded.", false, auth.ReadCampaigns},
	{InboxEmailReceived, CategoryInbox, "A message arrived in a synced mailbox (any folder); data {email_id, email_account_id, thread_id, folder, message_id, from, subject, seen}.", true, auth.ReadUnibox},
	{InboxEmailUpdated, CategoryInbox, "An inbox message changed on the server or through the API (read state, flags, folder; thread categories are the thread's and raise nothing); data {email_id, email_account_id, thread_id, folder, message_id, from, subject, seen} as it is now.", true, auth.ReadUnibox},
	{InboxEmailDeleted, CategoryInbox, "An inbox message was deleted (expunged on the server); data {email_id, email_account_id, thread_id, folder, message_id, from, subject, seen} as it was.", true, auth.ReadUnibox},
	{InboxReplyReceived, CategoryInbox, "An answer arrived in a conversation the organization took part in (distinct from campaign.reply_received, and raised for out-of-office and automated answers too); data {email_id, email_account_id, thread_id, from, subject, intent}, plus campaign_id and contact_id when it answers a campaign send.", false, auth.ReadUnibox},
	{MailboxConnected, CategoryMailbox, "A mailbox was connected.", false, auth.ReadEmails},
	{MailboxDisconnected, CategoryMailbox, "A mailbox lost its connection.", false, auth.ReadEmails},
	{MailboxRemoved, CategoryMailbox, "A mailbox was removed.", false, auth.ReadEmails},
	{MailboxError, CategoryMailbox, "A mailbox hit an error (authentication, provider, limits).", false, auth.ReadEmails},
	{MailboxSynced, CategoryMailbox, "A mailbox finished a sync pass.", true, auth.ReadEmails},
	{MailboxHealthChanged, CategoryMailbox, "A mailbox's health changed.", false, auth.ReadEmails},
	{ContactCreated, CategoryContact, "A contact was added by hand, API, form or automation (not by imports).", false, auth.ReadContacts},
	{ContactUpdated, CategoryContact, "A contact changed; bulk writes raise one event with bulk and count.", false, auth.ReadContacts},
	{ContactDeleted, CategoryContact, "A contact was deleted.", false, auth.ReadContacts},
	{FormSubmitted, CategoryContact, "A form was submitted.", false, auth.ReadContacts},
	{CRMDealCreated, CategoryCRM, "A deal was created.", false, auth.ReadCRM},
	{CRMDealUpdated, CategoryCRM, "A deal changed.", false, auth.ReadCRM},
	{CRMDealDeleted, CategoryCRM, "A deal was deleted.", false, auth.ReadCRM},
	{CRMTaskCreated, CategoryCRM, "A task was created.", false, auth.ReadCRM},
	{CRMTaskUpdated, CategoryCRM, "A task changed; bulk writes raise one event with bulk and count.", false, auth.ReadCRM},
	{CRMNoteCreated, CategoryCRM, "A note was added.", false, auth.ReadCRM},
	{CRMPipelineUpdated, CategoryCRM, "A pipeline or its stages changed.", false, auth.ReadCRM},
	{AutomationCreated, CategoryAutomation, "An automation was created.", false, auth.Integrations},
	{AutomationUpdated, CategoryAutomation, "An automation changed.", false, auth.Integrations},
	{AutomationDeleted, CategoryAutomation, "An automation was deleted.", false, auth.Integrations},
	{AutomationRun, CategoryAutomation, "An automation ran.", false, auth.Integrations},
	{MeetingBooked, CategoryMeeting, "A meeting was booked.", false, auth.ReadCampaigns},
	{MeetingRescheduled, CategoryMeeting, "A meeting was rescheduled.", false, auth.ReadCampaigns},
	{MeetingCanceled, CategoryMeeting, "A meeting was canceled.", false, auth.ReadCampaigns},
	{TeamMemberInvited, CategoryTeamAndAccess, "Someone was invited to the organization.", false, auth.ReadAuditLogs},
	{TeamMemberRemoved, CategoryTeamAndAccess, "A member left or was removed.", false, auth.ReadAuditLogs},
	{RoleCreated, CategoryTeamAndAccess, "A custom role was created.", false, auth.ReadAuditLogs},
	{RoleUpdated, CategoryTeamAndAccess, "A custom role changed.", false, auth.ReadAuditLogs},
	{RoleDeleted, CategoryTeamAndAccess, "A custom role was deleted.", false, auth.ReadAuditLogs},
	{BulkOperationStarted, CategoryBulkOperations, "A bulk operation started.", false, auth.ReadContacts},
	{BulkOperationCompleted, CategoryBulkOperations, "A bulk operation completed.", false, auth.ReadContacts},
	{BulkOperationFailed, CategoryBulkOperations, "A bulk operation failed.", false, auth.ReadContacts},
	{LeadSyncSourceUpdated, CategoryWorkspace, "A lead sync source changed.", false, auth.ReadAuditLogs},
	{SettingsUpdated, CategoryWorkspace, "Organization settings changed.", false, auth.ReadAuditLogs},
	{SubscriptionUpdated, CategoryWorkspace, "The organization's subscription changed.", false, auth.ReadAuditLogs},
	{CustomEvent, CategoryDeveloper, "An event an integrator published.", false, auth.RealtimeSubscribe},
	{WebhookTest, CategoryTest, "The signed verification challenge; sent only by POST /webhooks/{id}/verify.", false, 0},
	{ApprovalRequested, CategoryAgents, "An API key or OAuth token asked for an action outside its agent policy and it waits for a person; data {approval_id, action_type, run_id, reasons, expires_at, approval_url}.", false, auth.ReadRuns},
	{ApprovalDecided, CategoryAgents, "A held action was approved, denied or expired; data {approval_id, action_type, run_id, status, reason, result}.", false, auth.ReadRuns},
	{RunStateChanged, CategoryAgents, "A run moved to another state; data {run_id, state, previous_state, campaign_id, approval_id}.", false, auth.ReadRuns},
}

var byType = func() map[Type]Info {
	m := make(map[Type]Info, len(Catalog))
	for _, i := range Catalog {
		m[i.Type] = i
	}
	return m
}()

// Lookup returns the catalog entry of t.
func Lookup(t Type) (Info, bool) {
	i, ok := byType[t]
	return i, ok
}
