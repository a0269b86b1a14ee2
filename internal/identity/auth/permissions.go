package auth

// Permission is a bitmask of API scopes. An API key or OAuth token may call a route only when its mask holds
// every bit the route needs.
type Permission uint64

// The scope bits, in the order the public catalog lists them. Values are part of the API: never renumber.
const (
	ReadEmails Permission = 1 << iota
	WriteEmails
	ReadCampaigns
	WriteCampaigns
	SendCampaigns
	ReadContacts
	WriteContacts
	BulkContacts
	ReadUnibox
	WriteUnibox
	ReadCRM
	WriteCRM
	ReadAnalytics
	ReadAuditLogs
	APIKeys
	Webhooks
	Integrations
	RealtimeSubscribe
	ReadRuns
	WriteRuns
	ExecuteRuns
	SendDirectEmail
	SendInboxReply
	WriteEvents
	ManageMailboxProvisioning

	// permissionEnd is one past the highest defined bit.
	permissionEnd
)

// FullAccess holds every defined scope; `admin bootstrap` issues it.
const FullAccess = permissionEnd - 1

// Has reports whether p holds every bit of need.
func (p Permission) Has(need Permission) bool { return p&need == need }
