import { ToolValidationError } from "../../errors/error-classes.js";

/** The code of a {@link CommandSyntaxError}. */
export const COMMAND_SYNTAX_CODE = "shell.command_syntax";

/** Why a command line cannot be run without a shell. */
export type CommandSyntaxReason =
  | "empty"
  | "unterminated_quote"
  | "trailing_backslash"
  | "shell_operator"
  | "assignment";

/** What a {@link CommandSyntaxError} refuses, and where in the command line. */
export interface CommandSyntaxProblem {
  reason: CommandSyntaxReason;
  /** The shell operator or character refused (`shell_operator`), or the quote left open. */
  operator?: string | undefined;
  /** 0-based index in the command line. */
  index?: number | undefined;
}

/** A command line `execute_command` cannot split, or that needs a shell; the message says what to do instead. */
export class CommandSyntaxError extends ToolValidationError {
  readonly reason: CommandSyntaxReason;
  /** The shell operator or character refused (`shell_operator`), or the quote left open. */
  readonly operator: string | undefined;
  /** 1-based column in the command line. */
  readonly column: number | undefined;
  constructor(message: string, { reason, operator, index }: CommandSyntaxProblem) {
    const column = index === undefined ? undefined : index + 1;
    super(message, { code: COMMAND_SYNTAX_CODE, context: { reason, operator, column } });
    this.name = "CommandSyntaxError";
    this.reason = reason;
    this.operator = operator;
    this.column = column;
  }
}

const SEQUENCE = "there are no pipes, lists or background jobs: run each program in its own call";
const SUBSTITUTION =
  "there is no variable expansion or command substitution: write the value itself, run an inner command in " +
  "its own call first, and use set_env for the program's environment";

/** What each refused character means in a shell, and what to do instead. */
const HINTS: Record<string, string> = {
  "|": SEQUENCE,
  "&": SEQUENCE,
  ";": SEQUENCE,
  "\n": SEQUENCE,
  "(": "there are no subshells or groups: run each program in its own call",
  ")": "there are no subshells or groups: run each program in its own call",
  "<": "there is no redirection: pass the file name as an argument if the program takes one",
  ">": "there is no redirection: the call returns stdout and stderr; write files with a file tool",
  $: SUBSTITUTION,
  "`": SUBSTITUTION,
  "*": "there is no filename expansion: list the files first and pass their names",
  "?": "there is no filename expansion: list the files first and pass their names",
  "[": "there is no filename expansion: list the files first and pass their names",
  "~": "there is no tilde expansion: use a path relative to the workspace",
  "#": "there are no comments",
};
/** Characters with a shell meaning only at the start of a word. */
const AT_WORD_START = new Set(["~", "#"]);

/**
 * Split one command line into argv the POSIX way, without expanding anything: blanks separate words; `'…'`
 * keeps everything literally; `"…"` keeps everything but `\"`, `\\`, `\$`, `` \` `` (backslash-newline is
 * removed); a backslash outside quotes takes the next character literally. Anything a shell would interpret —
 * `| || & && ; < > ( )`, backticks, `$` (variables, `$(…)`, `${…}`), a newline, unquoted `* ? [`, and `~` or `#`
 * at the start of a word — is refused with a {@link CommandSyntaxError} that says the command runs without a
 * shell and what to do instead, as are an open quote, a trailing backslash, an empty line and a leading
 * `NAME=value` (use `set_env`).
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let i = 0;
  while (i < line.length) {
    const char = line[i]!;
    if (char === " " || char === "\t") {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      i += 1;
    } else if (char === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw unterminated("'", i);
      word += line.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (char === '"') {
      const [text, next] = readDoubleQuoted(line, i);
      word += text;
      inWord = true;
      i = next;
    } else if (char === "\\") {
      if (i + 1 >= line.length) {
        throw new CommandSyntaxError(
          "execute_command: the command line ends with a backslash that escapes nothing; remove it or quote it ('\\\\')",
          { reason: "trailing_backslash", operator: "\\", index: i },
        );
      }
      if (line[i + 1] !== "\n") {
        word += line[i + 1];
        inWord = true;
      }
      i += 2;
    } else if (Object.hasOwn(HINTS, char) && (!AT_WORD_START.has(char) || !inWord)) {
      throw refused(line, i);
    } else {
      word += char;
      inWord = true;
      i += 1;
    }
  }
  if (inWord) words.push(word);
  if (words.length === 0) {
    throw new CommandSyntaxError("execute_command: the command line is empty; give a program to run", {
      reason: "empty",
    });
  }
  if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) {
    throw new CommandSyntaxError(
      `execute_command runs the command without a shell, so '${words[0]}' is not a variable assignment: ` +
        "call set_env(name, value) first, then run the command",
      { reason: "assignment", operator: words[0], index: 0 },
    );
  }
  return words;
}

/** The text of the double-quoted string opening at `start`, and the index after its closing quote. */
function readDoubleQuoted(line: string, start: number): [string, number] {
  let text = "";
  let i = start + 1;
  while (i < line.length) {
    const char = line[i]!;
    if (char === '"') return [text, i + 1];
    if (char === "\\" && i + 1 < line.length) {
      const next = line[i + 1]!;
      if (next !== "\n") text += '"\\$`'.includes(next) ? next : `\\${next}`;
      i += 2;
    } else if (char === "$" || char === "`") {
      throw refused(line, i);
    } else {
      text += char;
      i += 1;
    }
  }
  throw unterminated('"', start);
}

function unterminated(quote: string, index: number): CommandSyntaxError {
  return new CommandSyntaxError(
    `execute_command: the ${quote === "'" ? "single" : "double"} quote at column ${index + 1} is never closed; ` +
      `close it with ${quote}`,
    { reason: "unterminated_quote", operator: quote, index },
  );
}

/** The refusal of the shell character at `index`, naming the whole operator (`&&`, `>>`, `$(`, `$HOME`, …). */
function refused(line: string, index: number): CommandSyntaxError {
  const char = line[index]!;
  const operator =
    char === "$"
      ? (/^\$(?:[A-Za-z_][A-Za-z0-9_]*|[({])/.exec(line.slice(index))?.[0] ?? "$")
      : "|&<>".includes(char) && line[index + 1] === char
        ? char.repeat(2)
        : char;
  const shown = operator === "\n" ? "a newline" : `'${operator}'`;
  const literally =
    operator === "\n"
      ? "put it inside quotes"
      : `put it in single quotes or escape it with a backslash (\\${char})`;
  return new CommandSyntaxError(
    `execute_command runs the command without a shell, so ${shown} (column ${index + 1}) is not interpreted: ` +
      `${HINTS[char]}. If the program should receive ${shown} literally, ${literally}.`,
    { reason: "shell_operator", operator, index },
  );
}
