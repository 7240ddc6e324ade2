package cards

// This file describes Adaptive Cards 1.5: which properties each element and
// action has, which of them are required, and what values they take.
// Properties that are not listed are ignored, as renderers ignore them:
// hosts add their own (msteams is described only because Teams reads it).

// A check validates the value of one property found at path p.
type check func(v *validator, p string, val any, s scope)

type prop struct {
	name  string
	check check
}

// A schema describes one type of object: an element, an action, or a plain
// object such as a Fact.
type schema struct {
	typ      string
	required []string
	props    []prop
	// newer lists properties of Adaptive Cards 1.6, which a 1.5 card may not
	// use: Microsoft's parser rejects them when it targets 1.5.
	newer []string
}

// A position is a place where elements or actions go, such as a body or a
// ColumnSet's columns: it fixes which types are allowed there.
type position struct {
	what  string // "element", "inline" or "action", for messages
	types map[string]*schema
	// implied is the schema of an object without "type", where the format
	// allows that (columns, rows, cells, images).
	implied *schema
	// canFallback tells whether an unknown type here is replaced by a
	// fallback. It is false where Microsoft's parser never falls back:
	// selectAction, inlineAction, inlines, a refresh action and images.
	canFallback bool
}

// Values of the enumerations, spelled as in the specification. Renderers
// match them without regard to case, and so does the validator.
var (
	spacings            = []string{"default", "none", "small", "medium", "large", "extraLarge", "padding"}
	horizontalAlignment = []string{"left", "center", "right"}
	verticalAlignment   = []string{"top", "center", "bottom"}
	blockHeights        = []string{"auto", "stretch"}
	textSizes           = []string{"default", "small", "medium", "large", "extraLarge"}
	textWeights         = []string{"default", "lighter", "bolder"}
	textColors          = []string{"default", "dark", "light", "accent", "good", "warning", "attention"}
	fontTypes           = []string{"default", "monospace"}
	textBlockStyles     = []string{"default", "columnHeader", "heading"}
	imageStyles         = []string{"default", "person"}
	imageSizes          = []string{"auto", "stretch", "small", "medium", "large"}
	imageSetSizes       = []string{"small", "medium", "large"}
	containerStyles     = []string{"default", "emphasis", "good", "attention", "warning", "accent"}
	fillModes           = []string{"cover", "repeatHorizontally", "repeatVertically", "repeat"}
	textInputStyles     = []string{"text", "tel", "url", "email", "password"}
	choiceSetStyles     = []string{"compact", "expanded", "filtered"}
	actionStyles        = []string{"default", "positive", "destructive"}
	actionModes         = []string{"primary", "secondary"}
	associatedInputs    = []string{"auto", "none"}
	teamsWidths         = []string{"Full"}
)

// Properties shared by several types.
var (
	commonProps = []prop{
		{"id", id},
		{"requires", requires},
		{"isVisible", boolean},
		{"separator", boolean},
		{"spacing", enum(spacings...)},
		{"lang", lang},
	}
	elementProps = merge(commonProps, []prop{
		{"height", enum(blockHeights...)},
		{"horizontalAlignment", enum(horizontalAlignment...)},
	})
	textProps = []prop{
		{"text", str},
		{"size", enum(textSizes...)},
		{"weight", enum(textWeights...)},
		{"color", enum(textColors...)},
		{"isSubtle", boolean},
		{"fontType", enum(fontTypes...)},
	}
	containerProps = []prop{
		{"selectAction", selectAction},
		{"style", enum(containerStyles...)},
		{"verticalContentAlignment", enum(verticalAlignment...)},
		{"bleed", boolean},
		{"backgroundImage", backgroundImage},
		{"minHeight", pixels},
		{"rtl", boolean},
	}
	inputProps = []prop{
		{"id", inputID},
		{"label", str},
		{"isRequired", boolean},
		{"errorMessage", str},
	}
	inputNewer  = []string{"inputStyle", "labelWidth", "labelPosition"}
	actionProps = []prop{
		{"id", id},
		{"requires", requires},
		{"title", str},
		{"iconUrl", str},
		{"style", enum(actionStyles...)},
		{"mode", enum(actionModes...)},
		{"tooltip", str},
		{"isEnabled", boolean},
	}
	submitProps = []prop{
		{"data", anything},
		{"associatedInputs", enum(associatedInputs...)},
	}
)

var (
	textBlock = &schema{
		typ:      "TextBlock",
		required: []string{"text"},
		props: merge(elementProps, textProps, []prop{
			{"wrap", boolean},
			{"maxLines", number},
			{"style", enum(textBlockStyles...)},
		}),
	}
	textRun = &schema{
		typ:      "TextRun",
		required: []string{"text"},
		props: merge(elementProps, textProps, []prop{
			{"italic", boolean},
			{"strikethrough", boolean},
			{"highlight", boolean},
			{"underline", boolean},
			{"selectAction", selectAction},
		}),
	}
	richTextBlock = &schema{
		typ:      "RichTextBlock",
		required: []string{"inlines"},
		props:    merge(elementProps, []prop{{"inlines", inlines}}),
	}
	image = &schema{
		typ:      "Image",
		required: []string{"url"},
		// An Image's height takes pixels too, so it replaces the common one.
		props: merge(commonProps, []prop{
			{"horizontalAlignment", enum(horizontalAlignment...)},
			{"url", str},
			{"altText", str},
			{"backgroundColor", str},
			{"style", enum(imageStyles...)},
			{"size", enum(imageSizes...)},
			{"width", pixels},
			{"height", imageHeight},
			{"selectAction", selectAction},
		}),
		newer: []string{"forceLoad"},
	}
	imageSet = &schema{
		typ:      "ImageSet",
		required: []string{"images"},
		props: merge(elementProps, []prop{
			{"images", collection(images)},
			{"imageSize", enum(imageSetSizes...)},
		}),
		newer: []string{"style", "offset"},
	}
	media = &schema{
		typ:      "Media",
		required: []string{"sources"},
		props: merge(elementProps, []prop{
			{"sources", arrayOf(object(mediaSource))},
			{"poster", str},
			{"altText", str},
		}),
		newer: []string{"captionSources"},
	}
	mediaSource = &schema{
		typ:      "MediaSource",
		required: []string{"url"},
		props:    []prop{{"url", str}, {"mimeType", str}},
	}
	container = &schema{
		typ:      "Container",
		required: []string{"items"},
		props:    merge(elementProps, containerProps, []prop{{"items", collection(body)}}),
	}
	columnSet = &schema{
		typ: "ColumnSet",
		props: merge(elementProps, []prop{
			{"columns", collection(columns)},
			{"selectAction", selectAction},
			{"style", enum(containerStyles...)},
			{"bleed", boolean},
			{"minHeight", pixels},
		}),
	}
	column = &schema{
		typ: "Column",
		props: merge(elementProps, containerProps, []prop{
			{"items", collection(body)},
			{"width", columnWidth},
		}),
	}
	factSet = &schema{
		typ:      "FactSet",
		required: []string{"facts"},
		props:    merge(elementProps, []prop{{"facts", arrayOf(object(fact))}}),
	}
	fact = &schema{
		typ:      "Fact",
		required: []string{"title", "value"},
		props:    []prop{{"title", str}, {"value", str}},
	}
	actionSet = &schema{
		typ:      "ActionSet",
		required: []string{"actions"},
		props:    merge(elementProps, []prop{{"actions", collection(actions)}}),
	}
	table = &schema{
		typ: "Table",
		props: merge(elementProps, []prop{
			{"columns", arrayOf(object(tableColumn))},
			{"rows", collection(rows)},
			{"firstRowAsHeaders", boolean},
			{"showGridLines", boolean},
			{"gridStyle", enum(containerStyles...)},
			{"style", enum(containerStyles...)},
			{"horizontalCellContentAlignment", enum(horizontalAlignment...)},
			{"verticalCellContentAlignment", enum(verticalAlignment...)},
		}),
	}
	tableColumn = &schema{
		typ: "TableColumnDefinition",
		props: []prop{
			{"width", tableColumnWidth},
			{"horizontalCellContentAlignment", enum(horizontalAlignment...)},
			{"verticalCellContentAlignment", enum(verticalAlignment...)},
		},
	}
	tableRow = &schema{
		typ: "TableRow",
		props: merge(elementProps, []prop{
			{"cells", collection(cells)},
			{"style", enum(containerStyles...)},
			{"horizontalCellContentAlignment", enum(horizontalAlignment...)},
			{"verticalCellContentAlignment", enum(verticalAlignment...)},
		}),
	}
	tableCell = &schema{
		typ:      "TableCell",
		required: []string{"items"},
		props:    merge(elementProps, containerProps, []prop{{"items", collection(body)}}),
	}
	inputText = &schema{
		typ:      "Input.Text",
		required: []string{"id"},
		props: merge(elementProps, inputProps, []prop{
			{"value", str},
			{"placeholder", str},
			{"maxLength", number},
			{"isMultiline", boolean},
			{"regex", str},
			{"style", enum(textInputStyles...)},
			{"inlineAction", inlineAction},
		}),
		newer: inputNewer,
	}
	inputNumber = &schema{
		typ:      "Input.Number",
		required: []string{"id"},
		props: merge(elementProps, inputProps, []prop{
			{"value", number},
			{"min", number},
			{"max", number},
			{"placeholder", str},
		}),
		newer: inputNewer,
	}
	inputDate = &schema{
		typ:      "Input.Date",
		required: []string{"id"},
		props: merge(elementProps, inputProps, []prop{
			{"value", date},
			{"min", date},
			{"max", date},
			{"placeholder", str},
		}),
		newer: inputNewer,
	}
	inputTime = &schema{
		typ:      "Input.Time",
		required: []string{"id"},
		props: merge(elementProps, inputProps, []prop{
			{"value", clock},
			{"min", clock},
			{"max", clock},
			{"placeholder", str},
		}),
		newer: inputNewer,
	}
	inputToggle = &schema{
		typ:      "Input.Toggle",
		required: []string{"id", "title"},
		props: merge(elementProps, inputProps, []prop{
			{"title", str},
			{"value", str},
			{"valueOn", str},
			{"valueOff", str},
			{"wrap", boolean},
		}),
		newer: inputNewer,
	}
	inputChoiceSet = &schema{
		typ:      "Input.ChoiceSet",
		required: []string{"id", "choices"},
		props: merge(elementProps, inputProps, []prop{
			{"choices", choices},
			{"value", str},
			{"placeholder", str},
			{"isMultiSelect", boolean},
			{"style", enum(choiceSetStyles...)},
			{"wrap", boolean},
		}),
		newer: []string{"inputStyle", "labelWidth", "labelPosition", "choices.data"},
	}
	choice = &schema{
		typ:      "Input.Choice",
		required: []string{"title", "value"},
		props:    []prop{{"title", nonEmpty}, {"value", nonEmpty}},
	}
)

var (
	openURL = &schema{
		typ:      "Action.OpenUrl",
		required: []string{"url"},
		props:    merge(actionProps, []prop{{"url", nonEmpty}}),
		newer:    []string{"role"},
	}
	submit = &schema{
		typ:   "Action.Submit",
		props: merge(actionProps, submitProps),
		newer: []string{"role", "disabledUnlessAssociatedInputsChange"},
	}
	execute = &schema{
		typ:   "Action.Execute",
		props: merge(actionProps, submitProps, []prop{{"verb", str}}),
		newer: []string{"role", "disabledUnlessAssociatedInputsChange"},
	}
	showCard = &schema{
		typ:      "Action.ShowCard",
		required: []string{"card"},
		props:    merge(actionProps, []prop{{"card", nestedCard}}),
		newer:    []string{"role"},
	}
	toggleVisibility = &schema{
		typ:      "Action.ToggleVisibility",
		required: []string{"targetElements"},
		props:    merge(actionProps, []prop{{"targetElements", targetElements}}),
		newer:    []string{"role"},
	}
)

// cardProps are the properties of both a card and a ShowCard's card. To
// Microsoft's renderer a card is a Container, so it takes theirs too.
var cardProps = merge(elementProps, containerProps, []prop{
	{"body", collection(body)},
	{"actions", collection(actions)},
	{"fallbackText", str},
	{"speak", str},
	{"refresh", object(refresh)},
	{"authentication", object(authentication)},
	{"msteams", object(msteams)},
})

var (
	// The type and version of a card are checked apart, for clearer
	// messages, so they appear here only as required.
	rootCard = &schema{
		typ:      "AdaptiveCard",
		required: []string{"type", "version"},
		props:    merge([]prop{{"$schema", str}}, cardProps),
	}
	// A ShowCard's card inherits its version from the card around it.
	innerCard = &schema{
		typ:      "AdaptiveCard",
		required: []string{"type"},
		props:    cardProps,
	}
	backgroundImageObject = &schema{
		typ:      "BackgroundImage",
		required: []string{"url"},
		props: []prop{
			{"url", str},
			{"fillMode", enum(fillModes...)},
			{"horizontalAlignment", enum(horizontalAlignment...)},
			{"verticalAlignment", enum(verticalAlignment...)},
		},
	}
	refresh = &schema{
		typ:      "Refresh",
		required: []string{"action"},
		props: []prop{
			{"action", func(v *validator, p string, val any, s scope) { v.cardObject(p, val, refreshAction, s) }},
			{"userIds", arrayOf(str)},
		},
	}
	authentication = &schema{
		typ: "Authentication",
		props: []prop{
			{"text", str},
			{"connectionName", str},
			{"tokenExchangeResource", object(tokenExchangeResource)},
			{"buttons", arrayOf(object(authCardButton))},
		},
	}
	tokenExchangeResource = &schema{
		typ:      "TokenExchangeResource",
		required: []string{"id", "uri", "providerId"},
		props:    []prop{{"id", str}, {"uri", str}, {"providerId", str}},
	}
	authCardButton = &schema{
		typ:      "AuthCardButton",
		required: []string{"type", "value"},
		props:    []prop{{"type", str}, {"title", str}, {"image", str}, {"value", str}},
	}
	// msteams is Microsoft Teams' extension of the card.
	msteams = &schema{
		typ: "msteams",
		props: []prop{
			{"width", enum(teamsWidths...)},
			{"entities", arrayOf(teamsEntity)},
		},
	}
	mention = &schema{
		typ:      "mention",
		required: []string{"text", "mentioned"},
		props:    []prop{{"text", str}, {"mentioned", object(mentioned)}},
	}
	mentioned = &schema{
		typ:      "mentioned",
		required: []string{"id", "name"},
		props:    []prop{{"id", str}, {"name", str}},
	}
)

// Positions. The types allowed at each are set by init, as the schemas of
// containers refer to positions in turn.
var (
	body    = &position{what: "element", canFallback: true}
	columns = &position{what: "element", canFallback: true}
	rows    = &position{what: "element", canFallback: true}
	cells   = &position{what: "element", canFallback: true}
	// Microsoft's parser ignores the type of an image in an ImageSet; the
	// specification says it is an Image.
	images        = &position{what: "element"}
	inlineObjects = &position{what: "inline"}
	actions       = &position{what: "action", canFallback: true}
	selectActions = &position{what: "action"}
	refreshAction = &position{what: "action"}
)

// known holds every type of Adaptive Cards 1.5, to tell a misplaced type
// from an unknown one.
var known = map[string]bool{"AdaptiveCard": true}

func init() {
	body.types = byType(textBlock, richTextBlock, image, imageSet, media, container, columnSet, factSet, actionSet, table,
		inputText, inputNumber, inputDate, inputTime, inputToggle, inputChoiceSet)
	columns.types, columns.implied = byType(column), column
	rows.types, rows.implied = byType(tableRow), tableRow
	cells.types, cells.implied = byType(tableCell), tableCell
	images.types, images.implied = byType(image), image
	inlineObjects.types = byType(textRun)
	actions.types = byType(openURL, submit, execute, showCard, toggleVisibility)
	// A ShowCard cannot be selected: it has no button to unfold under.
	selectActions.types = byType(openURL, submit, execute, toggleVisibility)
	refreshAction.types = byType(execute)

	for _, pos := range []*position{body, columns, rows, cells, inlineObjects, actions} {
		for typ := range pos.types {
			known[typ] = true
		}
	}
}

func byType(schemas ...*schema) map[string]*schema {
	m := make(map[string]*schema, len(schemas))
	for _, s := range schemas {
		m[s.typ] = s
	}
	return m
}

// merge joins lists of properties. A later property replaces an earlier one
// of the same name, in its place.
func merge(lists ...[]prop) []prop {
	var all []prop
	at := make(map[string]int)
	for _, l := range lists {
		for _, p := range l {
			if i, ok := at[p.name]; ok {
				all[i] = p
				continue
			}
			at[p.name] = len(all)
			all = append(all, p)
		}
	}
	return all
}
