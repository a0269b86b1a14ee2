package handlers

import (
	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// public is an operation that takes no credential (part 1, Authentication rule 2).
var public = auth.Requirement{Access: auth.AccessPublic}

// anyCaller is an operation open to sessions (checked against perm) and to API keys and OAuth tokens
// (checked against scope).
func anyCaller(scope auth.Permission, perm auth.OrgPermission) auth.Requirement {
	return auth.Requirement{Access: auth.AccessAny, Scope: scope, OrgPermission: perm}
}

// sessionOnly is an operation for signed-in people only, whose role must allow perm.
func sessionOnly(perm auth.OrgPermission) auth.Requirement {
	return auth.Requirement{Access: auth.AccessSession, OrgPermission: perm}
}

// mailboxScoped marks r's parameter param as a mailbox id that a mailbox-scoped key may only name when the
// mailbox is one of its own.
func mailboxScoped(param string, r auth.Requirement) auth.Requirement {
	r.MailboxParam = param
	return r
}

// Routes is what every operation of the contract demands of its caller, keyed by ogen operation name: one
// table, so a reviewer reads the whole access model in one place and a test proves that no operation lacks
// an entry. Authorize enforces it before any handler runs; handlers keep their own checks for what depends
// on the request (a member leaving on their own, a launch intent needing EXECUTE_RUNS, agent policies).
//
// The scope and permission of each entry come from part 1 "Authentication" and the area tables of parts 2
// and 3; where those are silent, from the operation's description in openapi/, and where both are silent the
// area's read or write pair.
var Routes = map[string]auth.Requirement{
	// Sign-in, registration, social and passkey sign-in, token refresh: public (part 1, Authentication rule 2).
	api.AuthGetConfigOperation:            public,
	api.AuthListProvidersOperation:        public,
	api.AuthLoginStartOperation:           public,
	api.AuthLoginConfirmOperation:         public,
	api.AuthRegisterStartOperation:        public,
	api.AuthRegisterConfirmOperation:      public,
	api.AuthRefreshOperation:              public,
	api.AuthResetPasswordStartOperation:   public,
	api.AuthResetPasswordConfirmOperation: public,
	api.Auth2FAVerifyLoginOperation:       public,
	api.AuthPasskeyLoginBeginOperation:    public,
	api.AuthPasskeyLoginFinishOperation:   public,
	api.AuthAppleSignInOperation:          public,
	api.AuthAppleBeginOperation:           public,
	api.AuthAppleCallbackGetOperation:     public,
	api.AuthAppleCallbackPostOperation:    public,
	api.AuthGoogleSignInOperation:         public,
	api.AuthGoogleBeginOperation:          public,
	api.AuthGoogleCallbackOperation:       public,
	api.AuthOidcBeginOperation:            public,
	api.AuthOidcCallbackOperation:         public,
	api.AuthOidcExchangeOperation:         public,
	api.AuthSSOExchangeOperation:          public,

	// The signed-in person: sessions, profile, notifications, devices, 2FA and passkeys. Session only, no organization
	// needed (rule 3).
	api.AuthLogoutOperation:                        sessionOnly(0),
	api.AuthLogoutAllOperation:                     sessionOnly(0),
	api.AuthListSessionsOperation:                  sessionOnly(0),
	api.AuthRevokeOtherSessionsOperation:           sessionOnly(0),
	api.AuthRevokeSessionOperation:                 sessionOnly(0),
	api.AuthGetMeOperation:                         sessionOnly(0),
	api.AuthUpdateMeOperation:                      sessionOnly(0),
	api.AuthCompleteOnboardingOperation:            sessionOnly(0),
	api.AuthChangePasswordOperation:                sessionOnly(0),
	api.AuthUploadAvatarOperation:                  sessionOnly(0),
	api.AuthDeleteAvatarOperation:                  sessionOnly(0),
	api.AuthGetNotificationPreferencesOperation:    sessionOnly(0),
	api.AuthUpdateNotificationPreferencesOperation: sessionOnly(0),
	api.AuthListNotificationsOperation:             sessionOnly(0),
	api.AuthMarkAllNotificationsReadOperation:      sessionOnly(0),
	api.AuthMarkNotificationReadOperation:          sessionOnly(0),
	api.AuthRegisterDeviceTokenOperation:           sessionOnly(0),
	api.AuthDeleteDeviceTokenOperation:             sessionOnly(0),
	api.Auth2FAStatusOperation:                     sessionOnly(0),
	api.Auth2FAEnrollStartOperation:                sessionOnly(0),
	api.Auth2FAEnrollConfirmOperation:              sessionOnly(0),
	api.Auth2FADisableOperation:                    sessionOnly(0),
	api.AuthPasskeyRegisterBeginOperation:          sessionOnly(0),
	api.AuthPasskeyRegisterFinishOperation:         sessionOnly(0),
	api.AuthListPasskeyCredentialsOperation:        sessionOnly(0),
	api.AuthRenamePasskeyCredentialOperation:       sessionOnly(0),
	api.AuthDeletePasskeyCredentialOperation:       sessionOnly(0),

	// OAuth 2.1 endpoints and discovery documents: public; the consent page authenticates by the dashboard session
	// itself.
	api.OAuthGetAuthorizationServerMetadataOperation:  public,
	api.OAuthGetProtectedResourceMetadataOperation:    public,
	api.OAuthGetProtectedResourceMetadataMcpOperation: public,
	api.OAuthAuthorizeShowConsentOperation:            public,
	api.OAuthAuthorizeSubmitConsentOperation:          public,
	api.OAuthRegisterClientOperation:                  public,
	api.OAuthIssueTokenOperation:                      public,
	api.OAuthRevokeTokenOperation:                     public,

	// OAuth applications: managed by people holding manage_api_keys; sessions only.
	api.OAuthApplicationsListOperation:   sessionOnly(auth.ManageAPIKeys),
	api.OAuthApplicationsCreateOperation: sessionOnly(auth.ManageAPIKeys),
	api.OAuthApplicationsGetOperation:    sessionOnly(auth.ManageAPIKeys),
	api.OAuthApplicationsUpdateOperation: sessionOnly(auth.ManageAPIKeys),
	api.OAuthApplicationsDeleteOperation: sessionOnly(auth.ManageAPIKeys),

	// An OAuth application's webhook secret, endpoints and deliveries: scope API_KEYS, permission manage_api_keys.
	api.OAuthApplicationsGetWebhookSecretOperation:      anyCaller(auth.APIKeys, auth.ManageAPIKeys),
	api.OAuthApplicationsRotateWebhookSecretOperation:   anyCaller(auth.APIKeys, auth.ManageAPIKeys),
	api.OAuthApplicationsListWebhookEndpointsOperation:  anyCaller(auth.APIKeys, auth.ManageAPIKeys),
	api.OAuthApplicationsListWebhookDeliveriesOperation: anyCaller(auth.APIKeys, auth.ManageAPIKeys),

	// API keys: scope API_KEYS, permission manage_api_keys.
	api.APIKeysListOperation:            anyCaller(auth.APIKeys, auth.ManageAPIKeys),
	api.APIKeysCreateOperation:          anyCaller(auth.APIKeys, auth.ManageAPIKeys),
	api.APIKeysListPermissionsOperation: anyCaller(auth.APIKeys, auth.ManageAPIKeys),
	api.APIKeysGetOperation:             anyCaller(auth.APIKeys, auth.ManageAPIKeys),
	api.APIKeysUpdateOperation:          anyCaller(auth.APIKeys, auth.ManageAPIKeys),
	api.APIKeysRevokeOperation:          anyCaller(auth.APIKeys, auth.ManageAPIKeys),
	api.APIKeysDeleteOperation:          anyCaller(auth.APIKeys, auth.ManageAPIKeys),
	api.APIKeysUsageSummaryOperation:    anyCaller(auth.APIKeys, auth.ManageAPIKeys),
	api.APIKeysUsageAnalyticsOperation:  anyCaller(auth.APIKeys, auth.ManageAPIKeys),
	api.APIKeysAnalyticsOperation:       anyCaller(auth.APIKeys, auth.ManageAPIKeys),
	api.APIKeysListLogsOperation:        anyCaller(auth.APIKeys, auth.ManageAPIKeys),

	// Organization governance: sessions only. Listing and switching organizations, accepting an invitation and the
	// permission catalog need no organization selected.
	api.OrganizationsListOperation:                sessionOnly(0),
	api.OrganizationsSwitchOperation:              sessionOnly(0),
	api.OrganizationsAcceptInvitationOperation:    sessionOnly(0),
	api.OrganizationsListRolePermissionsOperation: sessionOnly(0),
	api.OrganizationsGetCurrentOperation:          sessionOnly(0),
	api.OrganizationsUpdateCurrentOperation:       sessionOnly(auth.ManageSettings),
	api.OrganizationsListMembersOperation:         sessionOnly(0),
	api.OrganizationsUpdateMemberOperation:        sessionOnly(auth.ManageTeam),
	api.OrganizationsRemoveMemberOperation:        sessionOnly(0), // manage_team, unless leaving: the handler decides
	api.OrganizationsListInvitationsOperation:     sessionOnly(auth.ManageTeam),
	api.OrganizationsCreateInvitationOperation:    sessionOnly(auth.ManageTeam),
	api.OrganizationsRevokeInvitationOperation:    sessionOnly(auth.ManageTeam),
	api.OrganizationsListRolesOperation:           sessionOnly(0),
	api.OrganizationsGetRoleOperation:             sessionOnly(0),
	api.OrganizationsCreateRoleOperation:          sessionOnly(auth.ManageTeam),
	api.OrganizationsUpdateRoleOperation:          sessionOnly(auth.ManageTeam),
	api.OrganizationsDeleteRoleOperation:          sessionOnly(auth.ManageTeam),

	// Teams: the one governance area open to keys (CRM tasks are assigned to teams): READ_CRM to read, WRITE_CRM plus
	// manage_team to change.
	api.OrganizationsListTeamsOperation:        anyCaller(auth.ReadCRM, 0),
	api.OrganizationsGetTeamOperation:          anyCaller(auth.ReadCRM, 0),
	api.OrganizationsCreateTeamOperation:       anyCaller(auth.WriteCRM, auth.ManageTeam),
	api.OrganizationsUpdateTeamOperation:       anyCaller(auth.WriteCRM, auth.ManageTeam),
	api.OrganizationsDeleteTeamOperation:       anyCaller(auth.WriteCRM, auth.ManageTeam),
	api.OrganizationsAddTeamMemberOperation:    anyCaller(auth.WriteCRM, auth.ManageTeam),
	api.OrganizationsRemoveTeamMemberOperation: anyCaller(auth.WriteCRM, auth.ManageTeam),

	// Deployment readiness and reference data: any credential, no organization needed.
	api.SystemGetReadinessOperation:      anyCaller(0, 0),
	api.AccountOrgTimezonesListOperation: anyCaller(0, 0),

	// Agent policies: managed by owners and settings managers in a session; any credential may read the policy that
	// governs it.
	api.AgentPoliciesGetEffectiveOperation: anyCaller(0, 0),
	api.AgentPoliciesListOperation:         sessionOnly(auth.ManageSettings),
	api.AgentPoliciesCreateOperation:       sessionOnly(auth.ManageSettings),
	api.AgentPoliciesUpdateOperation:       sessionOnly(auth.ManageSettings),
	api.AgentPoliciesDeleteOperation:       sessionOnly(auth.ManageSettings),

	// Approvals of held launches: people who manage sends, in a session.
	api.ApprovalsListOperation:   sessionOnly(auth.ManageCampaigns),
	api.ApprovalsDecideOperation: sessionOnly(auth.ManageCampaigns),

	// Agent tools and MCP: any credential; each tool checks the scope of the route it mirrors.
	api.AgentToolsListOperation: anyCaller(0, 0),
	api.AgentToolsCallOperation: anyCaller(0, 0),
	api.McpPostMessageOperation: anyCaller(0, 0),
	api.McpOpenStreamOperation:  anyCaller(0, 0),

	// Runs: READ_RUNS / WRITE_RUNS (a launch intent also needs EXECUTE_RUNS, checked by the handler); sessions need
	// the campaign permissions.
	api.RunsListOperation:   anyCaller(auth.ReadRuns, auth.ViewCampaigns),
	api.RunsGetOperation:    anyCaller(auth.ReadRuns, auth.ViewCampaigns),
	api.RunsCreateOperation: anyCaller(auth.WriteRuns, auth.ManageCampaigns),
	api.RunsCancelOperation: anyCaller(auth.WriteRuns, auth.ManageCampaigns),

	// Webhooks: scope WEBHOOKS, permission manage_settings.
	api.WebhooksListOperation:              anyCaller(auth.Webhooks, auth.ManageSettings),
	api.WebhooksCreateOperation:            anyCaller(auth.Webhooks, auth.ManageSettings),
	api.WebhooksUpdateOperation:            anyCaller(auth.Webhooks, auth.ManageSettings),
	api.WebhooksDeleteOperation:            anyCaller(auth.Webhooks, auth.ManageSettings),
	api.WebhooksRotateSecretOperation:      anyCaller(auth.Webhooks, auth.ManageSettings),
	api.WebhooksVerifyOperation:            anyCaller(auth.Webhooks, auth.ManageSettings),
	api.WebhooksListEventTypesOperation:    anyCaller(auth.Webhooks, auth.ManageSettings),
	api.WebhooksListDeliveriesOperation:    anyCaller(auth.Webhooks, auth.ManageSettings),
	api.WebhooksListOrgDeliveriesOperation: anyCaller(auth.Webhooks, auth.ManageSettings),
	api.WebhooksRedeliverOperation:         anyCaller(auth.Webhooks, auth.ManageSettings),
	api.WebhooksListThrottleDropsOperation: anyCaller(auth.Webhooks, auth.ManageSettings),

	// Mailboxes: READ_EMAILS / view_campaigns to read, WRITE_EMAILS / manage_emails to change (part 2). A mailbox-
	// scoped key reaches only its own mailboxes.
	api.MailboxesListOperation:                 anyCaller(auth.ReadEmails, auth.ViewCampaigns),
	api.MailboxesCreateOperation:               anyCaller(auth.WriteEmails, auth.ManageEmails),
	api.MailboxesOAuthCallbackOperation:        public,
	api.MailboxesOAuthCliStartOperation:        anyCaller(auth.WriteEmails, auth.ManageEmails),
	api.MailboxesOAuthSessionGetOperation:      anyCaller(auth.WriteEmails, auth.ManageEmails),
	api.MailboxesVerifyAddressOperation:        anyCaller(auth.ReadEmails, auth.ViewCampaigns),
	api.MailboxesGetOperation:                  mailboxScoped("id", anyCaller(auth.ReadEmails, auth.ViewCampaigns)),
	api.MailboxesUpdateOperation:               mailboxScoped("id", anyCaller(auth.WriteEmails, auth.ManageEmails)),
	api.MailboxesDeleteOperation:               mailboxScoped("id", anyCaller(auth.WriteEmails, auth.ManageEmails)),
	api.MailboxesAuthCheckOperation:            mailboxScoped("id", anyCaller(auth.ReadEmails, auth.ViewCampaigns)),
	api.MailboxesTestOperation:                 mailboxScoped("id", anyCaller(auth.WriteEmails, auth.ManageEmails)),
	api.MailboxesHoldOperation:                 mailboxScoped("id", anyCaller(auth.WriteEmails, auth.ManageEmails)),
	api.MailboxesReleaseOperation:              mailboxScoped("id", anyCaller(auth.WriteEmails, auth.ManageEmails)),
	api.MailboxesSyncStateOperation:            mailboxScoped("id", anyCaller(auth.ReadEmails, auth.ViewCampaigns)),
	api.MailboxesListUnsettledSendsOperation:   mailboxScoped("id", anyCaller(auth.ReadEmails, auth.ViewCampaigns)),
	api.MailboxesDecideUnsettledSendOperation:  mailboxScoped("id", sessionOnly(auth.ManageEmails)),
	api.MailboxesSendIdentityOperation:         mailboxScoped("id", anyCaller(auth.ReadEmails, auth.ViewCampaigns)),
	api.MailboxesRefreshSendIdentityOperation:  mailboxScoped("id", anyCaller(auth.WriteEmails, auth.ManageEmails)),
	api.MailboxesGetTrackingDomainOperation:    mailboxScoped("id", anyCaller(auth.ReadEmails, auth.ViewCampaigns)),
	api.MailboxesUpdateTrackingDomainOperation: mailboxScoped("id", anyCaller(auth.WriteEmails, auth.ManageEmails)),
	api.MailboxesVerifyTrackingDomainOperation: mailboxScoped("id", anyCaller(auth.WriteEmails, auth.ManageEmails)),
	api.MailboxesWarmupGetOperation:            mailboxScoped("id", anyCaller(auth.ReadEmails, auth.ViewCampaigns)),
	api.MailboxesWarmupBanStatusOperation:      mailboxScoped("id", anyCaller(auth.ReadEmails, auth.ViewCampaigns)),
	api.MailboxesWarmupAppealOperation:         mailboxScoped("id", anyCaller(auth.WriteEmails, auth.ManageEmails)),
	api.MailboxesWarmupStartOperation:          mailboxScoped("id", anyCaller(auth.WriteEmails, auth.ManageEmails)),
	api.MailboxesWarmupPauseOperation:          mailboxScoped("id", anyCaller(auth.WriteEmails, auth.ManageEmails)),
	api.MailboxesWarmupResumeOperation:         mailboxScoped("id", anyCaller(auth.WriteEmails, auth.ManageEmails)),
	api.MailboxesWarmupStopOperation:           mailboxScoped("id", anyCaller(auth.WriteEmails, auth.ManageEmails)),

	// A one-off message from one mailbox: SEND_DIRECT_EMAIL (part 1, direct sends).
	api.MailboxesSendOperation: mailboxScoped("id", anyCaller(auth.SendDirectEmail, auth.ManageEmails)),

	// Mailbox tags: the mailbox area's label registry.
	api.LabelsCreateTagOperation: anyCaller(auth.WriteEmails, auth.ManageEmails),
	api.LabelsUpdateTagOperation: anyCaller(auth.WriteEmails, auth.ManageEmails),
	api.LabelsDeleteTagOperation: anyCaller(auth.WriteEmails, auth.ManageEmails),
	api.LabelsMoveTagOperation:   anyCaller(auth.WriteEmails, auth.ManageEmails),

	// Managed mailboxes: READ_EMAILS to read; ordering spends money, so MANAGE_MAILBOX_PROVISIONING and, for sessions,
	// manage_settings.
	api.MailboxesProvisionProvidersListOperation: anyCaller(auth.ReadEmails, auth.ViewCampaigns),
	api.MailboxesDomainsRenewalsListOperation:    anyCaller(auth.ReadEmails, auth.ViewCampaigns),
	api.ManagedMailboxesListOrdersOperation:      anyCaller(auth.ReadEmails, auth.ViewCampaigns),
	api.ManagedMailboxesGetOrderOperation:        anyCaller(auth.ReadEmails, auth.ViewCampaigns),
	api.ManagedMailboxesQuoteOperation:           anyCaller(auth.ManageMailboxProvisioning, auth.ManageSettings),
	api.ManagedMailboxesProvisionOperation:       anyCaller(auth.ManageMailboxProvisioning, auth.ManageSettings),
	api.ManagedMailboxesCancelOrderOperation:     anyCaller(auth.ManageMailboxProvisioning, auth.ManageSettings),

	// Warmup routing rules: part of running mailboxes.
	api.DeliverabilityOpsListRoutingRulesOperation:  anyCaller(auth.ReadEmails, auth.ViewCampaigns),
	api.DeliverabilityOpsCreateRoutingRuleOperation: anyCaller(auth.WriteEmails, auth.ManageEmails),
	api.DeliverabilityOpsUpdateRoutingRuleOperation: anyCaller(auth.WriteEmails, auth.ManageEmails),
	api.DeliverabilityOpsDeleteRoutingRuleOperation: anyCaller(auth.WriteEmails, auth.ManageEmails),

	// Unified inbox: READ_UNIBOX / WRITE_UNIBOX, permission access_unibox. A mailbox filter naming another mailbox is
	// refused for a mailbox-scoped key.
	api.UniboxListOperation:            mailboxScoped("email_id", anyCaller(auth.ReadUnibox, auth.AccessUnibox)),
	api.UniboxCountOperation:           mailboxScoped("email_id", anyCaller(auth.ReadUnibox, auth.AccessUnibox)),
	api.UniboxOverviewOperation:        anyCaller(auth.ReadUnibox, auth.AccessUnibox),
	api.UniboxGetThreadOperation:       mailboxScoped("email_id", anyCaller(auth.ReadUnibox, auth.AccessUnibox)),
	api.UniboxGetThreadLabelsOperation: anyCaller(auth.ReadUnibox, auth.AccessUnibox),
	api.UniboxListSnoozesOperation:     anyCaller(auth.ReadUnibox, auth.AccessUnibox),
	api.UniboxListScheduledOperation:   anyCaller(auth.ReadUnibox, auth.AccessUnibox),
	api.UniboxGetOperation:             anyCaller(auth.ReadUnibox, auth.AccessUnibox),
	api.UniboxMoveFolderOperation:      anyCaller(auth.WriteUnibox, auth.AccessUnibox),
	api.UniboxMarkSeenOperation:        anyCaller(auth.WriteUnibox, auth.AccessUnibox),
	api.UniboxSetThreadLabelsOperation: anyCaller(auth.WriteUnibox, auth.AccessUnibox),
	api.UniboxSnoozeOperation:          anyCaller(auth.WriteUnibox, auth.AccessUnibox),
	api.UniboxUnsnoozeOperation:        anyCaller(auth.WriteUnibox, auth.AccessUnibox),
	api.UniboxCancelScheduledOperation: anyCaller(auth.WriteUnibox, auth.AccessUnibox),
	api.UniboxComposeOperation:         anyCaller(auth.SendDirectEmail, auth.AccessUnibox),
	api.UniboxReplyOperation:           anyCaller(auth.SendInboxReply, auth.AccessUnibox),

	// Contacts: READ_CONTACTS / view_contacts to read, WRITE_CONTACTS / manage_contacts to change one, BULK_CONTACTS /
	// manage_contacts for selections and imports (part 2).
	api.ContactsSearchOperation:             anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.ContactsLookupOperation:             anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.ContactsGetOperation:                anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.ContactsActivitiesListOperation:     anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.ContactsDealsListOperation:          anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.ContactsEmailsListOperation:         anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.ContactsNotesListOperation:          anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.ContactsTimelineListOperation:       anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.ContactsResearchGetOperation:        anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.ContactsVerificationStatusOperation: anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.ContactsVerificationGetOperation:    anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.ContactsExportOperation:             anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.ContactsCreateOperation:             anyCaller(auth.WriteContacts, auth.ManageContacts),
	api.ContactsUpdateOperation:             anyCaller(auth.WriteContacts, auth.ManageContacts),
	api.ContactsDeleteOperation:             anyCaller(auth.WriteContacts, auth.ManageContacts),
	api.ContactsNotesCreateOperation:        anyCaller(auth.WriteContacts, auth.ManageContacts),
	api.ContactsNotesUpdateOperation:        anyCaller(auth.WriteContacts, auth.ManageContacts),
	api.ContactsNotesDeleteOperation:        anyCaller(auth.WriteContacts, auth.ManageContacts),
	api.ContactsResearchContactOperation:    anyCaller(auth.WriteContacts, auth.ManageContacts),
	api.ContactsBulkUpdateOperation:         anyCaller(auth.BulkContacts, auth.ManageContacts),
	api.ContactsBulkDeleteOperation:         anyCaller(auth.BulkContacts, auth.ManageContacts),
	api.ContactsImportPreviewOperation:      anyCaller(auth.BulkContacts, auth.ManageContacts),
	api.ContactsImportCommitOperation:       anyCaller(auth.BulkContacts, auth.ManageContacts),
	api.ContactsResearchBatchOperation:      anyCaller(auth.BulkContacts, auth.ManageContacts),
	api.ContactsVerificationStartOperation:  anyCaller(auth.BulkContacts, auth.ManageContacts),

	// Contact categories: the contact area's label registry (also inbox conversation labels).
	api.LabelsCreateCategoryOperation: anyCaller(auth.WriteContacts, auth.ManageContacts),
	api.LabelsUpdateCategoryOperation: anyCaller(auth.WriteContacts, auth.ManageContacts),
	api.LabelsDeleteCategoryOperation: anyCaller(auth.WriteContacts, auth.ManageContacts),
	api.LabelsMoveCategoryOperation:   anyCaller(auth.WriteContacts, auth.ManageContacts),

	// Segments: contact reads and writes; membership changes are bulk selections.
	api.SegmentsListOperation:          anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.SegmentsGetOperation:           anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.SegmentsMembersListOperation:   anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.SegmentsCreateOperation:        anyCaller(auth.WriteContacts, auth.ManageContacts),
	api.SegmentsUpdateOperation:        anyCaller(auth.WriteContacts, auth.ManageContacts),
	api.SegmentsDeleteOperation:        anyCaller(auth.WriteContacts, auth.ManageContacts),
	api.SegmentsMembersAddOperation:    anyCaller(auth.BulkContacts, auth.ManageContacts),
	api.SegmentsMembersRemoveOperation: anyCaller(auth.BulkContacts, auth.ManageContacts),

	// Suppressions: the recipients the organization never mails, kept with its contacts.
	api.DeliverabilityOpsListSuppressionsOperation:  anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.DeliverabilityOpsAddSuppressionsOperation:   anyCaller(auth.WriteContacts, auth.ManageContacts),
	api.DeliverabilityOpsRemoveSuppressionOperation: anyCaller(auth.WriteContacts, auth.ManageContacts),

	// Forms (extended surface): contact capture; the hosted form posts its submissions publicly.
	api.FormsListOperation:            anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.FormsGetOperation:             anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.FormsListSubmissionsOperation: anyCaller(auth.ReadContacts, auth.ViewContacts),
	api.FormsCreateOperation:          anyCaller(auth.WriteContacts, auth.ManageContacts),
	api.FormsUpdateOperation:          anyCaller(auth.WriteContacts, auth.ManageContacts),
	api.FormsDeleteOperation:          anyCaller(auth.WriteContacts, auth.ManageContacts),
	api.FormsSubmitOperation:          public,

	// Meetings (extended surface): bookings are read like contacts.
	api.MeetingsListOperation: anyCaller(auth.ReadContacts, auth.ViewContacts),

	// Campaigns: READ_CAMPAIGNS / view_campaigns to read, WRITE_CAMPAIGNS / manage_campaigns to change, SEND_CAMPAIGNS
	// for anything that sends or preflights (part 3).
	api.CampaignsListOperation:                 anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.CampaignsGetOverviewOperation:          anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.CampaignsEstimateOperation:             anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.CampaignsTemplatePreviewOperation:      anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.CampaignsGetOperation:                  anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.CampaignsGetAbAnalysisOperation:        anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.CampaignsListAbVariantsOperation:       anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.CampaignsGetAdvancedOperation:          anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.CampaignsListAttachmentsOperation:      anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.CampaignsGetLeadHoldOperation:          anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.CampaignsListLogsOperation:             anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.CampaignsListSendersOperation:          anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.CampaignsListStepsOperation:            anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.CampaignsListTestRunsOperation:         anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.CampaignsGetTestRunOperation:           anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.CampaignsValidateOperation:             anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.CampaignsCreateOperation:               anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsUpdateOperation:               anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsDeleteOperation:               anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsDuplicateOperation:            anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsCreateAbVariantOperation:      anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsUpdateAbVariantOperation:      anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsDeleteAbVariantOperation:      anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsUploadAttachmentOperation:     anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsDeleteAttachmentOperation:     anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsPauseLeadOperation:            anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsResumeLeadOperation:           anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsReplaceSendersOperation:       anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsStartOperation:                anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsStopOperation:                 anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsRetryStepRunOperation:         anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsCreateStepOperation:           anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsUpdateStepOperation:           anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsDeleteStepOperation:           anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsVerifyTrackingDomainOperation: anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.CampaignsUpdateAdvancedOperation:       anyCaller(auth.WriteCampaigns, auth.ManageSettings),
	api.CampaignsRunPreflightOperation:         anyCaller(auth.SendCampaigns, auth.ManageCampaigns),
	api.CampaignsTestOperation:                 anyCaller(auth.SendCampaigns, auth.ManageCampaigns),
	api.CampaignsSendTestEmailOperation:        anyCaller(auth.SendCampaigns, auth.ManageCampaigns),
	api.CampaignsCancelTestRunOperation:        anyCaller(auth.SendCampaigns, auth.ManageCampaigns),

	// Campaign folders: the campaign area's label registry.
	api.LabelsCreateFolderOperation: anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.LabelsUpdateFolderOperation: anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.LabelsDeleteFolderOperation: anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.LabelsMoveFolderOperation:   anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),

	// Templates (extended surface): campaign content.
	api.TemplatesListOperation:   anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.TemplatesGetOperation:    anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.TemplatesCreateOperation: anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.TemplatesUpdateOperation: anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),
	api.TemplatesDeleteOperation: anyCaller(auth.WriteCampaigns, auth.ManageCampaigns),

	// Product events: WRITE_EVENTS to record (resumes waiting campaign steps), READ_CAMPAIGNS to read.
	api.ProductEventsListOperation:   anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.ProductEventsGetOperation:    anyCaller(auth.ReadCampaigns, auth.ViewCampaigns),
	api.ProductEventsCreateOperation: anyCaller(auth.WriteEvents, auth.ManageCampaigns),

	// Deliverability reports from providers feed the campaign posture.
	api.DeliverabilityOpsIngestEventOperation: anyCaller(auth.WriteEvents, auth.ManageCampaigns),

	// Tracking and unsubscribe links: public, answered to recipients.
	api.TrackingClickRedirectOperation:   public,
	api.TrackingOpenPixelOperation:       public,
	api.TrackingUnsubscribePageOperation: public,
	api.TrackingUnsubscribeOperation:     public,

	// Analytics: READ_ANALYTICS / view_analytics (part 3). A mailbox's account analytics follow mailbox scoping.
	api.AnalyticsDashboardOperation:        anyCaller(auth.ReadAnalytics, auth.ViewAnalytics),
	api.AnalyticsUsageOperation:            anyCaller(auth.ReadAnalytics, auth.ViewAnalytics),
	api.AnalyticsDeliverabilityOperation:   anyCaller(auth.ReadAnalytics, auth.ViewAnalytics),
	api.AnalyticsWarmupOperation:           mailboxScoped("email_id", anyCaller(auth.ReadAnalytics, auth.ViewAnalytics)),
	api.AnalyticsAccountsListOperation:     anyCaller(auth.ReadAnalytics, auth.ViewAnalytics),
	api.AnalyticsAccountGetOperation:       mailboxScoped("id", anyCaller(auth.ReadAnalytics, auth.ViewAnalytics)),
	api.AnalyticsCampaignGetOperation:      anyCaller(auth.ReadAnalytics, auth.ViewAnalytics),
	api.AnalyticsCampaignDailyOperation:    anyCaller(auth.ReadAnalytics, auth.ViewAnalytics),
	api.AnalyticsCampaignHourlyOperation:   anyCaller(auth.ReadAnalytics, auth.ViewAnalytics),
	api.AnalyticsCampaignsCompareOperation: anyCaller(auth.ReadAnalytics, auth.ViewAnalytics),

	// Audit log: READ_AUDIT_LOGS, permission view_analytics (part 3).
	api.AnalyticsAuditLogsListOperation: anyCaller(auth.ReadAuditLogs, auth.ViewAnalytics),

	// CRM (extended surface): READ_CRM / view_contacts to read, WRITE_CRM / manage_contacts to change (part 3).
	api.CrmDealsListOperation:            anyCaller(auth.ReadCRM, auth.ViewContacts),
	api.CrmDealsSearchOperation:          anyCaller(auth.ReadCRM, auth.ViewContacts),
	api.CrmDealsSummaryOperation:         anyCaller(auth.ReadCRM, auth.ViewContacts),
	api.CrmDealsGetOperation:             anyCaller(auth.ReadCRM, auth.ViewContacts),
	api.CrmPipelinesListOperation:        anyCaller(auth.ReadCRM, auth.ViewContacts),
	api.CrmPipelinesGetOperation:         anyCaller(auth.ReadCRM, auth.ViewContacts),
	api.CrmTaskTypesListOperation:        anyCaller(auth.ReadCRM, auth.ViewContacts),
	api.CrmTasksListOperation:            anyCaller(auth.ReadCRM, auth.ViewContacts),
	api.CrmTasksSearchOperation:          anyCaller(auth.ReadCRM, auth.ViewContacts),
	api.CrmTasksSummaryOperation:         anyCaller(auth.ReadCRM, auth.ViewContacts),
	api.CrmTasksGetOperation:             anyCaller(auth.ReadCRM, auth.ViewContacts),
	api.CrmDealsCreateOperation:          anyCaller(auth.WriteCRM, auth.ManageContacts),
	api.CrmDealsUpdateOperation:          anyCaller(auth.WriteCRM, auth.ManageContacts),
	api.CrmDealsDeleteOperation:          anyCaller(auth.WriteCRM, auth.ManageContacts),
	api.CrmPipelinesCreateOperation:      anyCaller(auth.WriteCRM, auth.ManageContacts),
	api.CrmPipelinesUpdateOperation:      anyCaller(auth.WriteCRM, auth.ManageContacts),
	api.CrmPipelinesDeleteOperation:      anyCaller(auth.WriteCRM, auth.ManageContacts),
	api.CrmPipelineStagesCreateOperation: anyCaller(auth.WriteCRM, auth.ManageContacts),
	api.CrmPipelineStagesUpdateOperation: anyCaller(auth.WriteCRM, auth.ManageContacts),
	api.CrmPipelineStagesDeleteOperation: anyCaller(auth.WriteCRM, auth.ManageContacts),
	api.CrmTaskTypesCreateOperation:      anyCaller(auth.WriteCRM, auth.ManageContacts),
	api.CrmTaskTypesUpdateOperation:      anyCaller(auth.WriteCRM, auth.ManageContacts),
	api.CrmTaskTypesDeleteOperation:      anyCaller(auth.WriteCRM, auth.ManageContacts),
	api.CrmTasksCreateOperation:          anyCaller(auth.WriteCRM, auth.ManageContacts),
	api.CrmTasksUpdateOperation:          anyCaller(auth.WriteCRM, auth.ManageContacts),

	// Integrations (extended surface): INTEGRATIONS; sessions read with use_integrations and configure with
	// manage_settings (part 3).
	api.IntegrationsListCatalogOperation:            anyCaller(auth.Integrations, auth.UseIntegrations),
	api.IntegrationsListConnectionsOperation:        anyCaller(auth.Integrations, auth.UseIntegrations),
	api.IntegrationsGetConnectionOperation:          anyCaller(auth.Integrations, auth.UseIntegrations),
	api.IntegrationsListConnectionEventsOperation:   anyCaller(auth.Integrations, auth.UseIntegrations),
	api.IntegrationsListFieldMappingsOperation:      anyCaller(auth.Integrations, auth.UseIntegrations),
	api.IntegrationsListConnectionRunsOperation:     anyCaller(auth.Integrations, auth.UseIntegrations),
	api.IntegrationsListBookingsOperation:           anyCaller(auth.Integrations, auth.UseIntegrations),
	api.IntegrationsConnectionsPushOperation:        anyCaller(auth.Integrations, auth.UseIntegrations),
	api.IntegrationsCreateConnectionOperation:       anyCaller(auth.Integrations, auth.ManageSettings),
	api.IntegrationsDeleteConnectionOperation:       anyCaller(auth.Integrations, auth.ManageSettings),
	api.IntegrationsUpdateConnectionConfigOperation: anyCaller(auth.Integrations, auth.ManageSettings),
	api.IntegrationsCreateConnectionEventOperation:  anyCaller(auth.Integrations, auth.ManageSettings),
	api.IntegrationsDeleteConnectionEventOperation:  anyCaller(auth.Integrations, auth.ManageSettings),
	api.IntegrationsReplaceFieldMappingsOperation:   anyCaller(auth.Integrations, auth.ManageSettings),
	api.IntegrationsTestConnectionOperation:         anyCaller(auth.Integrations, auth.ManageSettings),
	api.IntegrationsGetWebhookSecretOperation:       anyCaller(auth.Integrations, auth.ManageSettings),
	api.IntegrationsOAuthStartOperation:             sessionOnly(auth.ManageSettings),

	// Automations (extended surface): integration reads and configuration.
	api.AutomationsListOperation:     anyCaller(auth.Integrations, auth.UseIntegrations),
	api.AutomationsGetOperation:      anyCaller(auth.Integrations, auth.UseIntegrations),
	api.AutomationsRunsListOperation: anyCaller(auth.Integrations, auth.UseIntegrations),
	api.AutomationsCreateOperation:   anyCaller(auth.Integrations, auth.ManageSettings),
	api.AutomationsUpdateOperation:   anyCaller(auth.Integrations, auth.ManageSettings),
	api.AutomationsDeleteOperation:   anyCaller(auth.Integrations, auth.ManageSettings),
	api.AutomationsTestOperation:     anyCaller(auth.Integrations, auth.ManageSettings),

	// App connections: scope INTEGRATIONS, permission manage_settings (part 3).
	api.AppConnectionsListOperation:         anyCaller(auth.Integrations, auth.ManageSettings),
	api.AppConnectionsCreateOperation:       anyCaller(auth.Integrations, auth.ManageSettings),
	api.AppConnectionsGetOperation:          anyCaller(auth.Integrations, auth.ManageSettings),
	api.AppConnectionsUpdateOperation:       anyCaller(auth.Integrations, auth.ManageSettings),
	api.AppConnectionsDeleteOperation:       anyCaller(auth.Integrations, auth.ManageSettings),
	api.AppConnectionsRotateSecretOperation: anyCaller(auth.Integrations, auth.ManageSettings),
	api.AppConnectionsTestOperation:         anyCaller(auth.Integrations, auth.ManageSettings),
}

// noOrganization lists the operations a session may call without an organization selected: they act on the
// signed-in person, across their organizations, or on the deployment. Every other operation works inside
// one organization, so a session without one is told to select it first.
var noOrganization = map[string]bool{
	api.AuthLogoutOperation:                        true,
	api.AuthLogoutAllOperation:                     true,
	api.AuthListSessionsOperation:                  true,
	api.AuthRevokeOtherSessionsOperation:           true,
	api.AuthRevokeSessionOperation:                 true,
	api.AuthGetMeOperation:                         true,
	api.AuthUpdateMeOperation:                      true,
	api.AuthCompleteOnboardingOperation:            true,
	api.AuthChangePasswordOperation:                true,
	api.AuthUploadAvatarOperation:                  true,
	api.AuthDeleteAvatarOperation:                  true,
	api.AuthGetNotificationPreferencesOperation:    true,
	api.AuthUpdateNotificationPreferencesOperation: true,
	api.AuthListNotificationsOperation:             true,
	api.AuthMarkAllNotificationsReadOperation:      true,
	api.AuthMarkNotificationReadOperation:          true,
	api.AuthRegisterDeviceTokenOperation:           true,
	api.AuthDeleteDeviceTokenOperation:             true,
	api.Auth2FAStatusOperation:                     true,
	api.Auth2FAEnrollStartOperation:                true,
	api.Auth2FAEnrollConfirmOperation:              true,
	api.Auth2FADisableOperation:                    true,
	api.AuthPasskeyRegisterBeginOperation:          true,
	api.AuthPasskeyRegisterFinishOperation:         true,
	api.AuthListPasskeyCredentialsOperation:        true,
	api.AuthRenamePasskeyCredentialOperation:       true,
	api.AuthDeletePasskeyCredentialOperation:       true,
	api.OrganizationsListOperation:                 true,
	api.OrganizationsSwitchOperation:               true,
	api.OrganizationsAcceptInvitationOperation:     true,
	api.OrganizationsListRolePermissionsOperation:  true,
	api.SystemGetReadinessOperation:                true,
	api.AccountOrgTimezonesListOperation:           true,
}
