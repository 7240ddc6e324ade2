package expr

import "strings"

// overload is one signature of a function the language offers. The checker
// resolves calls against these, and the evaluator implements every one.
type overload struct {
	Name string
	// Member marks a receiver-style overload, whose Params[0] is the
	// receiver.
	Member bool
	Params []celType
	Result celType
}

// signatureTable declares the functions of the CEL standard library, the
// optional types and the Strings, Math, Encoders and Lists extensions at
// their latest versions, one or more overloads a line:
//
//	G|M name... params:result
//
// G is a global function, M a receiver-style one; several names share the
// signature; the single capital letters are type parameters. sortBy is the lists.sortBy macro: its
// second parameter is the list of keys the macro computes.
const signatureTable = `
G !_ bool:bool
G -_ double:double
G -_ int:int
G _&&_ _||_ bool,bool:bool
G _==_ _!=_ A,A:bool
G _?_:_ bool,A,A:A
G @in A,list(A):bool
G @in A,map(A,B):bool
G _+_ bytes,bytes:bytes
G _+_ _-_ _*_ _/_ double,double:double
G _+_ _-_ duration,duration:duration
G _+_ duration,timestamp:timestamp
G _+_ _-_ timestamp,duration:timestamp
G _+_ _-_ _*_ _/_ _%_ int,int:int
G _+_ list(A),list(A):list(A)
G _+_ string,string:string
G _+_ _-_ _*_ _/_ _%_ uint,uint:uint
G _-_ timestamp,timestamp:duration
G _<_ _<=_ _>_ _>=_ bool,bool:bool
G _<_ _<=_ _>_ _>=_ int,int:bool
G _<_ _<=_ _>_ _>=_ int,double:bool
G _<_ _<=_ _>_ _>=_ int,uint:bool
G _<_ _<=_ _>_ _>=_ uint,uint:bool
G _<_ _<=_ _>_ _>=_ uint,double:bool
G _<_ _<=_ _>_ _>=_ uint,int:bool
G _<_ _<=_ _>_ _>=_ double,double:bool
G _<_ _<=_ _>_ _>=_ double,int:bool
G _<_ _<=_ _>_ _>=_ double,uint:bool
G _<_ _<=_ _>_ _>=_ string,string:bool
G _<_ _<=_ _>_ _>=_ bytes,bytes:bool
G _<_ _<=_ _>_ _>=_ timestamp,timestamp:bool
G _<_ _<=_ _>_ _>=_ duration,duration:bool
G _[_] list(A),int:A
G _[_] map(A,B),A:B
G _[_] optional(list(V)),int:optional(V)
G _[_] optional(map(K,V)),K:optional(V)
G _[?_] list(V),int:optional(V)
G _[?_] optional(list(V)),int:optional(V)
G _[?_] map(K,V),K:optional(V)
G _[?_] optional(map(K,V)),K:optional(V)
G bool bool:bool
G bool string:bool
G bytes bytes:bytes
G bytes string:bytes
G double double:double
G double int:double
G double string:double
G double uint:double
G duration duration:duration
G duration string:duration
G dyn A:dyn
G int int:int
G int double:int
G int duration:int
G int string:int
G int timestamp:int
G int uint:int
G string string:string
G string bool:string
G string bytes:string
G string double:string
G string duration:string
G string int:string
G string timestamp:string
G string uint:string
G timestamp timestamp:timestamp
G timestamp int:timestamp
G timestamp string:timestamp
G type A:type(A)
G uint uint:uint
G uint double:uint
G uint int:uint
G uint string:uint
G size bytes:int
M size bytes:int
G size list(A):int
M size list(A):int
G size map(A,B):int
M size map(A,B):int
G size string:int
M size string:int
G matches string,string:bool
M matches contains endsWith startsWith string,string:bool
M getDate getDayOfMonth getDayOfWeek getDayOfYear getFullYear getHours getMilliseconds getMinutes getMonth getSeconds timestamp:int
M getDate getDayOfMonth getDayOfWeek getDayOfYear getFullYear getHours getMilliseconds getMinutes getMonth getSeconds timestamp,string:int
M getHours getMilliseconds getMinutes getSeconds duration:int
G optional.none :optional(V)
G optional.of optional.ofNonZeroValue V:optional(V)
G optional.unwrap list(optional(V)):list(V)
M unwrapOpt list(optional(V)):list(V)
M hasValue optional(V):bool
M hasValue optional(V),V:bool
M value optional(V):V
M or optional(V),optional(V):optional(V)
M orValue optional(V),V:V
M charAt string,int:string
M indexOf lastIndexOf string,string:int
M indexOf lastIndexOf string,string,int:int
M join list(string):string
M join list(string),string:string
M lowerAscii upperAscii trim string:string
M replace string,string,string:string
M replace string,string,string,int:string
M split string,string:list(string)
M split string,string,int:list(string)
M substring string,int:string
M substring string,int,int:string
M format string,list(dyn):string
M reverse string:string
G strings.quote string:string
G math.greatest math.least double:double
G math.greatest math.least int:int
G math.greatest math.least uint:uint
G math.greatest math.least double,double:double
G math.greatest math.least int,int:int
G math.greatest math.least uint,uint:uint
G math.greatest math.least int,uint:dyn
G math.greatest math.least int,double:dyn
G math.greatest math.least double,int:dyn
G math.greatest math.least double,uint:dyn
G math.greatest math.least uint,int:dyn
G math.greatest math.least uint,double:dyn
G math.greatest math.least list(double):double
G math.greatest math.least list(int):int
G math.greatest math.least list(uint):uint
G math.abs math.sign double:double
G math.abs math.sign int:int
G math.abs math.sign uint:uint
G math.bitAnd math.bitOr math.bitXor int,int:int
G math.bitAnd math.bitOr math.bitXor uint,uint:uint
G math.bitNot int:int
G math.bitNot uint:uint
G math.bitShiftLeft math.bitShiftRight int,int:int
G math.bitShiftLeft math.bitShiftRight uint,int:uint
G math.ceil math.floor math.round math.trunc math.sqrt double:double
G math.isFinite math.isInf math.isNaN double:bool
G math.sqrt int:double
G math.sqrt uint:double
G base64.decode base64.decodeUrl string:bytes
G base64.encode base64.encodeUrl bytes:string
G json.encode yaml.encode dyn:string
G json.parse yaml.parse string:optional(dyn)
G json.parse yaml.parse string,type(T):optional(T)
M distinct reverse list(T):list(T)
M first last list(V):optional(V)
M flatten list(list(T)):list(T)
M flatten list(dyn),int:list(dyn)
M hasAll hasAny hasExactly hasOnly list(T),list(T):bool
G lists.range int:list(int)
M slice list(T),int,int:list(T)
M sort list(int):list(int)
M sort list(uint):list(uint)
M sort list(double):list(double)
M sort list(bool):list(bool)
M sort list(duration):list(duration)
M sort list(timestamp):list(timestamp)
M sort list(string):list(string)
M sort list(bytes):list(bytes)
M sortBy list(T),list(int):list(T)
M sortBy list(T),list(uint):list(T)
M sortBy list(T),list(double):list(T)
M sortBy list(T),list(bool):list(T)
M sortBy list(T),list(duration):list(T)
M sortBy list(T),list(timestamp):list(T)
M sortBy list(T),list(string):list(T)
M sortBy list(T),list(bytes):list(T)
`

// overloads holds the parsed signatureTable, in its order.
var overloads = parseSignatures(signatureTable)

func parseSignatures(table string) []overload {
	out := make([]overload, 0, 300)
	for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
		f := strings.Fields(line)
		sig := f[len(f)-1]
		i := strings.LastIndexByte(sig, ':')
		var params []celType
		if i > 0 {
			for _, p := range splitTypes(sig[:i]) {
				params = append(params, parseType(p))
			}
		}
		result := parseType(sig[i+1:])
		for _, name := range f[1 : len(f)-1] {
			out = append(out, overload{Name: name, Member: f[0] == "M", Params: params, Result: result})
		}
	}
	return out
}

// splitTypes splits a comma-separated list of types at its top level.
func splitTypes(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func parseType(s string) celType {
	name, args, _ := strings.Cut(strings.TrimSuffix(s, ")"), "(")
	var params []celType
	if args != "" {
		for _, a := range splitTypes(args) {
			params = append(params, parseType(a))
		}
	}
	switch name {
	case "list":
		return listOf(params[0])
	case "map":
		return mapOf(params[0], params[1])
	case "optional":
		return optionalOf(params[0])
	case "type":
		if len(params) == 0 {
			return celType{Kind: kindType}
		}
		return typeOf(params[0])
	case "timestamp":
		return timestampType
	case "duration":
		return durationType
	}
	if len(name) == 1 {
		return paramType(name)
	}
	for k, n := range kindNames {
		if n == name {
			return celType{Kind: typeKind(k)}
		}
	}
	panic("expr: unknown type in signature table: " + s)
}
