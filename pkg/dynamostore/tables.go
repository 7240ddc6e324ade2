package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// DefaultPrefix is the table name prefix when none is configured.
const DefaultPrefix = "cardflow-dev-"

// Table names, without the prefix. Every table, key and index the service
// uses is defined in this file and nowhere else.
const (
	TableWorkflows   = "workflows"
	TableExecutions  = "executions"
	TableCards       = "cards"
	TableSchemas     = "schemas"
	TableAPIKeys     = "apikeys"
	TableProcesses   = "processes"
	TableSchedules   = "schedules"
	TableIdempotency = "idempotency"
	TableApprovals   = "approvals"
	// TableLimits holds the organizations' limits and what counts against
	// them (limits.go).
	TableLimits = "limits"

	// TableBulkOperations holds bulk operations and their client tokens.
	TableBulkOperations = "bulkoperations"

	// TableConversations holds the Teams conversations registered for
	// each organization (conversations.go).
	TableConversations = "conversations"
)

// Attribute names. Keys and index keys are top-level attributes; the rest
// of a record is the JSON in attrRecord.
const (
	attrOrg       = "organization_id"
	attrWorkflow  = "workflow_id"
	attrWFVersion = "workflow_version"
	attrCard      = "card_id"
	attrCVersion  = "card_version"
	attrExecution = "workflow_execution_id"
	attrRecord    = "record"
	// attrRevision is the revision of an execution or process record, which
	// every replacement conditions on; on an execution's part, the
	// revision of the write that made it.
	attrRevision = "revision"
	// attrParts is set on the head of an execution stored in parts; an
	// item without it holds a whole execution, as written before parts.
	attrParts = "parts"

	// attrListKey orders an organization's versions in the by_organization
	// index: the id, "#" and the version zero-padded to 10 digits. Ids are
	// ULIDs of one length, so string order is id order, then version order,
	// and one descending Query yields the list order of the Store port.
	attrListKey = "list_key"
	// attrLatest is the authority for `latest`: publishing clears it on the
	// previous latest version without rewriting that version's record.
	attrLatest = "latest"
	// attrLatestVersion lives on a workflow's or card's head item (version
	// 0): the version that is latest. Publishing conditions on it, which is
	// what makes concurrent publishes take turns.
	attrLatestVersion = "latest_version"
	// attrActiveVersion is the sort key of the cards' by_active_version
	// index, which the store reads and writes no more (see Tables).
	attrActiveVersion = "active_version"

	attrKeyHash = "key_hash"
	attrKeyID   = "key_id"
	// attrKeyGroup is "all" on every API key, the partition of the
	// all_keys index that lists keys without a Scan.
	attrKeyGroup = "key_group"
	// attrKeyTarget is set on key id claims: the hash of the claimed key.
	attrKeyTarget = "key_target"
	attrRevokedOn = "revoked_on"

	// attrOpenPartition is "open" on RUNNING and WAITING executions only,
	// the partition of the sparse open_executions index.
	attrOpenPartition = "open_partition"

	attrProcessKey = "process_key" // organization_id#process_id
	// attrClosed mirrors the process record's closed flag, for the
	// condition that lets a new execution take over a closed process id.
	attrClosed         = "closed"
	attrIdempotencyKey = "idempotency_key" // organization_id#key
	attrExpiresAt      = "expires_at"      // epoch seconds, the TTL attribute
	// attrScheduleGroup is "all" on every schedule, the partition of the
	// all_schedules index that lists them without a Scan.
	attrScheduleGroup = "schedule_group"

	// attrDueKind and attrDueAt (epoch ms) are set on a process record
	// only while housekeeping has something to do with it (cardflow's
	// Process.Due): they key the sparse by_due index.
	attrDueKind = "due_kind"
	attrDueAt   = "due_at"
	// attrExpiryGroup is "all" on every idempotency record, the partition
	// of the by_expiry index that finds expired ones without a Scan.
	attrExpiryGroup = "expiry_group"

	attrApprovalKey = "approval_key" // organization_id#approval_id
	attrApprovalID  = "approval_id"
	// attrPendingOrg is the organization on PENDING approvals only, the
	// partition of the sparse pending index.
	attrPendingOrg = "pending_org"
	// attrApprovers (a string set, lower case) and attrCreatedOn are what
	// getPendingApprovals filters on, beside workflow_id.
	attrApprovers = "approvers"
	attrCreatedOn = "created_on"
	// attrDueOn is an approval's due (epoch ms), when it has one, which
	// getPendingApprovals' overdue filter reads.
	attrDueOn = "due_on"

	// The limits table: an item's kind and the counts it keeps.
	attrLimitKey       = "limit_key"
	attrOpenExecutions = "open_executions"
	attrRequests       = "requests"

	// Search attributes of an execution's head (cardflow.SearchIndex),
	// written on every put. attrCreatedKey sorts every search index: the
	// created_on zero-padded to 15 digits, "#" and the execution id. The
	// others are partitions: the organization, "#" and the values the
	// index holds, joined by "#".
	attrCreatedKey           = "created_key"
	attrSearchProcess        = "search_process"         // organization_id#process_id
	attrSearchWorkflowStatus = "search_workflow_status" // organization_id#workflow_id#status
	attrSearchWorkflow       = "search_workflow"        // organization_id#workflow_id
	attrSearchStatus         = "search_status"          // organization_id#status
	attrSearchTrigger        = "search_trigger"         // organization_id#trigger_type

	attrBulkKey = "bulk_key" // organization_id#bulk_operation_id, or organization_id#token:<client token>
	attrBulkID  = "bulk_operation_id"
	// attrBulkTarget is set on a client token's claim: the operation it
	// made.
	attrBulkTarget = "bulk_target"
	// attrRunningPartition is "running" on RUNNING bulk operations only,
	// the partition of the sparse running_bulk index.
	attrRunningPartition = "running_partition"

	// attrConversation keys a Teams conversation, whose organization is
	// attrOrg.
	attrConversation = "conversation_id"
)

// Index names.
const (
	indexByOrganization  = "by_organization"
	indexByActiveVersion = "by_active_version"
	indexAllKeys         = "all_keys"
	indexOpenExecutions  = "open_executions"
	indexAllSchedules    = "all_schedules"
	indexByDue           = "by_due"
	indexByExpiry        = "by_expiry"
	indexPending         = "pending"

	indexSearchProcess        = "search_process"
	indexSearchWorkflowStatus = "search_workflow_status"
	indexSearchWorkflow       = "search_workflow"
	indexSearchStatus         = "search_status"
	indexSearchTrigger        = "search_trigger"
	indexSearchCreated        = "search_created"

	indexRunningBulk = "running_bulk"
)

// searchIndex is the DynamoDB index of a cardflow.SearchIndex: its name,
// its partition attribute, and the search attributes it projects beside
// its keys, which are the filters a search on it may still apply. An index
// projects no record: an execution's head changes at every step, and an
// index that held it would be written at every step too; these are
// written only when an execution starts or its status changes, and a
// search reads the heads it finds from the table.
type searchIndex struct {
	name, partition string
	include         []string
}

var searchIndexes = map[cardflow.SearchIndex]searchIndex{
	cardflow.SearchByProcess:        {indexSearchProcess, attrSearchProcess, []string{attrSearchWorkflow, attrSearchStatus, attrSearchTrigger}},
	cardflow.SearchByWorkflowStatus: {indexSearchWorkflowStatus, attrSearchWorkflowStatus, []string{attrSearchTrigger}},
	cardflow.SearchByWorkflow:       {indexSearchWorkflow, attrSearchWorkflow, []string{attrSearchTrigger}},
	cardflow.SearchByStatus:         {indexSearchStatus, attrSearchStatus, []string{attrSearchTrigger}},
	cardflow.SearchByTrigger:        {indexSearchTrigger, attrSearchTrigger, nil},
	cardflow.SearchByCreated:        {indexSearchCreated, attrOrg, nil},
}

// searchGSIs returns the definitions of the search indexes.
func searchGSIs() ([]types.AttributeDefinition, []types.GlobalSecondaryIndex) {
	defs := []types.AttributeDefinition{str(attrCreatedKey)}
	var gsis []types.GlobalSecondaryIndex
	for _, idx := range cardflow.SearchIndexes {
		si := searchIndexes[idx]
		if si.partition != attrOrg {
			defs = append(defs, str(si.partition))
		}
		proj := &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}
		if len(si.include) > 0 {
			proj = &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: si.include}
		}
		gsis = append(gsis, types.GlobalSecondaryIndex{IndexName: aws.String(si.name), KeySchema: keySchema(si.partition, attrCreatedKey), Projection: proj})
	}
	return defs, gsis
}

// Table is the definition of one table: what CreateTable takes, and the TTL
// attribute to enable once it exists ("" for none).
type Table struct {
	Input        *dynamodb.CreateTableInput
	TTLAttribute string
}

// Tables returns the definitions of every table, their names starting with
// prefix. Tables are billed per request, so no capacity is planned here.
func Tables(prefix string) []Table {
	searchDefs, searchIndexes := searchGSIs()
	return []Table{
		{Input: versionedTable(prefix+TableWorkflows, attrWorkflow, attrWFVersion, nil)},
		{Input: &dynamodb.CreateTableInput{
			TableName:            aws.String(prefix + TableExecutions),
			AttributeDefinitions: append([]types.AttributeDefinition{str(attrWorkflow), str(attrExecution), str(attrOrg), str(attrOpenPartition)}, searchDefs...),
			KeySchema:            keySchema(attrWorkflow, attrExecution),
			GlobalSecondaryIndexes: append([]types.GlobalSecondaryIndex{
				gsi(indexByOrganization, attrOrg, attrExecution),
				// Open executions by key and organization only: an index
				// write costs only when an execution opens or closes, not
				// on every step it takes.
				{
					IndexName: aws.String(indexOpenExecutions),
					KeySchema: keySchema(attrOpenPartition, attrExecution),
					Projection: &types.Projection{
						ProjectionType:   types.ProjectionTypeInclude,
						NonKeyAttributes: []string{attrOrg},
					},
				},
			}, searchIndexes...),
			BillingMode: types.BillingModePayPerRequest,
		}},
		// Cards kept active_version on ACTIVE versions for this local index
		// while getLatestActiveCard answered the highest ACTIVE version; it
		// answers the latest version now, as workflows do. The index stays
		// because a local index goes only with its table, and the tables
		// of a deployment hold its records.
		{Input: versionedTable(prefix+TableCards, attrCard, attrCVersion, []types.LocalSecondaryIndex{{
			IndexName:  aws.String(indexByActiveVersion),
			KeySchema:  keySchema(attrCard, attrActiveVersion),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}})},
		{Input: &dynamodb.CreateTableInput{
			TableName:            aws.String(prefix + TableSchemas),
			AttributeDefinitions: []types.AttributeDefinition{str(attrWorkflow), num(attrWFVersion)},
			KeySchema:            keySchema(attrWorkflow, attrWFVersion),
			BillingMode:          types.BillingModePayPerRequest,
		}},
		// API keys are stored by the SHA-256 of the key. A second item per
		// key, "key_id#<id>", claims the key id: it keeps ids unique and
		// leads a revocation to the hash with one consistent read.
		{Input: &dynamodb.CreateTableInput{
			TableName:            aws.String(prefix + TableAPIKeys),
			AttributeDefinitions: []types.AttributeDefinition{str(attrKeyHash), str(attrOrg), str(attrKeyID), str(attrKeyGroup)},
			KeySchema:            keySchema(attrKeyHash, ""),
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
				gsi(indexByOrganization, attrOrg, attrKeyID),
				gsi(indexAllKeys, attrKeyGroup, attrKeyID),
			},
			BillingMode: types.BillingModePayPerRequest,
		}},
		// The engine's tables: a wait's process id, schedules, and the
		// answers of idempotent triggers.
		// Housekeeping finds overdue waits, stale early resumes and
		// expired records through sparse indexes, most overdue first.
		{Input: &dynamodb.CreateTableInput{
			TableName:              aws.String(prefix + TableProcesses),
			AttributeDefinitions:   []types.AttributeDefinition{str(attrProcessKey), str(attrDueKind), num(attrDueAt)},
			KeySchema:              keySchema(attrProcessKey, ""),
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{gsi(indexByDue, attrDueKind, attrDueAt)},
			BillingMode:            types.BillingModePayPerRequest,
		}, TTLAttribute: attrExpiresAt},
		{Input: &dynamodb.CreateTableInput{
			TableName:              aws.String(prefix + TableSchedules),
			AttributeDefinitions:   []types.AttributeDefinition{str(attrWorkflow), num(attrWFVersion), str(attrScheduleGroup)},
			KeySchema:              keySchema(attrWorkflow, attrWFVersion),
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{gsi(indexAllSchedules, attrScheduleGroup, "")},
			BillingMode:            types.BillingModePayPerRequest,
		}},
		{Input: &dynamodb.CreateTableInput{
			TableName:            aws.String(prefix + TableIdempotency),
			AttributeDefinitions: []types.AttributeDefinition{str(attrIdempotencyKey), str(attrExpiryGroup), num(attrExpiresAt)},
			KeySchema:            keySchema(attrIdempotencyKey, ""),
			// Deleting needs only the keys.
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
				IndexName:  aws.String(indexByExpiry),
				KeySchema:  keySchema(attrExpiryGroup, attrExpiresAt),
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
			}},
			BillingMode: types.BillingModePayPerRequest,
		}, TTLAttribute: attrExpiresAt},
		// Approvals by organization and id; the sparse pending index holds
		// open ones only, so the pending list is one Query per page.
		{Input: &dynamodb.CreateTableInput{
			TableName:              aws.String(prefix + TableApprovals),
			AttributeDefinitions:   []types.AttributeDefinition{str(attrApprovalKey), str(attrPendingOrg), str(attrApprovalID)},
			KeySchema:              keySchema(attrApprovalKey, ""),
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{gsi(indexPending, attrPendingOrg, attrApprovalID)},
			BillingMode:            types.BillingModePayPerRequest,
		}},
		// An organization's limits and counts, in its own partition; the
		// counts of past rate windows expire.
		{Input: &dynamodb.CreateTableInput{
			TableName:            aws.String(prefix + TableLimits),
			AttributeDefinitions: []types.AttributeDefinition{str(attrOrg), str(attrLimitKey)},
			KeySchema:            keySchema(attrOrg, attrLimitKey),
			BillingMode:          types.BillingModePayPerRequest,
		}, TTLAttribute: attrExpiresAt},

		// Bulk operations by organization and id; the sparse running_bulk
		// index holds running ones only, for the workers.
		{Input: &dynamodb.CreateTableInput{
			TableName:            aws.String(prefix + TableBulkOperations),
			AttributeDefinitions: []types.AttributeDefinition{str(attrBulkKey), str(attrRunningPartition), str(attrBulkID)},
			KeySchema:            keySchema(attrBulkKey, ""),
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
				IndexName:  aws.String(indexRunningBulk),
				KeySchema:  keySchema(attrRunningPartition, attrBulkID),
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{attrOrg}},
			}},
			BillingMode: types.BillingModePayPerRequest,
		}},
		// Teams conversations by id, so that one belongs to one
		// organization at most; by_organization lists an organization's.
		{Input: &dynamodb.CreateTableInput{
			TableName:              aws.String(prefix + TableConversations),
			AttributeDefinitions:   []types.AttributeDefinition{str(attrConversation), str(attrOrg)},
			KeySchema:              keySchema(attrConversation, ""),
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{gsi(indexByOrganization, attrOrg, attrConversation)},
			BillingMode:            types.BillingModePayPerRequest,
		}},
	}
}

// versionedTable defines the table of a record kind saved in versions:
// workflows and cards.
func versionedTable(name, id, version string, lsis []types.LocalSecondaryIndex) *dynamodb.CreateTableInput {
	defs := []types.AttributeDefinition{str(id), num(version), str(attrOrg), str(attrListKey)}
	if lsis != nil {
		defs = append(defs, num(attrActiveVersion))
	}
	return &dynamodb.CreateTableInput{
		TableName:              aws.String(name),
		AttributeDefinitions:   defs,
		KeySchema:              keySchema(id, version),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{gsi(indexByOrganization, attrOrg, attrListKey)},
		LocalSecondaryIndexes:  lsis,
		BillingMode:            types.BillingModePayPerRequest,
	}
}

// str and num define a key attribute of type string and number.
func str(name string) types.AttributeDefinition {
	return types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeTypeS}
}

func num(name string) types.AttributeDefinition {
	return types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeTypeN}
}

// keySchema returns a partition key and, unless sort is "", a sort key.
func keySchema(partition, sort string) []types.KeySchemaElement {
	ks := []types.KeySchemaElement{{AttributeName: aws.String(partition), KeyType: types.KeyTypeHash}}
	if sort != "" {
		ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(sort), KeyType: types.KeyTypeRange})
	}
	return ks
}

// gsi returns a global index that projects whole items: every list shows
// records, so a keys-only index would cost a read per item.
func gsi(name, partition, sort string) types.GlobalSecondaryIndex {
	return types.GlobalSecondaryIndex{
		IndexName:  aws.String(name),
		KeySchema:  keySchema(partition, sort),
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
	}
}

// TablesClient is the part of the DynamoDB API that CreateTables calls;
// *dynamodb.Client has it.
type TablesClient interface {
	CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	DescribeTimeToLive(context.Context, *dynamodb.DescribeTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error)
	UpdateTimeToLive(context.Context, *dynamodb.UpdateTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
	UpdateTable(context.Context, *dynamodb.UpdateTableInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTableOutput, error)
}

// CreateTables creates the tables of Tables(prefix) that do not exist yet,
// waits until every one is ACTIVE and enables TTL where a table has it. It
// leaves existing tables as they are but for the global indexes their
// definitions gained since (addMissingIndexes), so running it again
// changes nothing. It returns the names of the tables it created.
func CreateTables(ctx context.Context, client TablesClient, prefix string) ([]string, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	var created []string
	tables := Tables(prefix)
	for _, t := range tables {
		_, err := client.CreateTable(ctx, t.Input)
		var inUse *types.ResourceInUseException
		switch {
		case errors.As(err, &inUse):
		case err != nil:
			return created, fmt.Errorf("create table %s: %w", *t.Input.TableName, err)
		default:
			created = append(created, *t.Input.TableName)
		}
	}
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 200*time.Millisecond, 5*time.Second
	})
	for _, t := range tables {
		name := *t.Input.TableName
		if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: t.Input.TableName}, 5*time.Minute); err != nil {
			return created, fmt.Errorf("wait for table %s: %w", name, err)
		}
		if _, err := addMissingIndexes(ctx, client, t); err != nil {
			return created, err
		}
		if t.TTLAttribute == "" {
			continue
		}
		ttl, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: t.Input.TableName})
		if err != nil {
			return created, fmt.Errorf("describe TTL of %s: %w", name, err)
		}
		if d := ttl.TimeToLiveDescription; d != nil && (d.TimeToLiveStatus == types.TimeToLiveStatusEnabled || d.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
			continue
		}
		_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
			TableName:               t.Input.TableName,
			TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(t.TTLAttribute), Enabled: aws.Bool(true)},
		})
		if err != nil {
			return created, fmt.Errorf("enable TTL on %s: %w", name, err)
		}
	}
	return created, nil
}

// checkPrefix keeps table names within DynamoDB's rules: 3 to 255 of
// a-z, A-Z, 0-9, '_', '-' and '.'.
func checkPrefix(prefix string) error {
	if len(prefix) > 200 {
		return fmt.Errorf("table prefix %q is longer than 200 characters", prefix)
	}
	for _, r := range prefix {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("table prefix %q may hold only letters, digits, '_', '-' and '.'", prefix)
		}
	}
	return nil
}
