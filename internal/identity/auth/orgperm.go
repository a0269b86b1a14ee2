package auth

// OrgPermission is a bitmask of organization permissions: what a signed-in member may do in the selected
// organization. Session callers are checked against it; API keys and OAuth tokens against their scopes.
type OrgPermission uint32

// The organization permissions of part 1, in catalog order. Values are stored in custom roles: never renumber.
const (
	ManageAPIKeys OrgPermission = 1 << iota
	ManageSettings
	UseIntegrations
	ViewContacts
	ManageContacts
	ViewCampaigns
	ManageCampaigns
	ManageEmails
	AccessUnibox
	ViewAnalytics
	ManageTeam

	orgPermissionEnd
)

// AllOrgPermissions is every organization permission: what owners and admins hold.
const AllOrgPermissions = orgPermissionEnd - 1

// OrgPermissionNames maps each permission to its catalog name, in order.
var OrgPermissionNames = []struct {
	Permission OrgPermission
	Name       string
}{
	{ManageAPIKeys, "manage_api_keys"}, {ManageSettings, "manage_settings"}, {UseIntegrations, "use_integrations"},
	{ViewContacts, "view_contacts"}, {ManageContacts, "manage_contacts"}, {ViewCampaigns, "view_campaigns"},
	{ManageCampaigns, "manage_campaigns"}, {ManageEmails, "manage_emails"}, {AccessUnibox, "access_unibox"},
	{ViewAnalytics, "view_analytics"}, {ManageTeam, "manage_team"},
}

// Built-in roles. Members run the day-to-day work; only owners and admins manage keys, settings and people.
const (
	RoleOwner  = "owner"
	RoleAdmin  = "admin"
	RoleMember = "member"
)

// BuiltinRolePermissions is what each built-in role may do.
var BuiltinRolePermissions = map[string]OrgPermission{
	RoleOwner:  AllOrgPermissions,
	RoleAdmin:  AllOrgPermissions,
	RoleMember: UseIntegrations | ViewContacts | ManageContacts | ViewCampaigns | ManageCampaigns | ManageEmails | AccessUnibox | ViewAnalytics,
}

// Has reports whether p holds every bit of need.
func (p OrgPermission) Has(need OrgPermission) bool { return p&need == need }
