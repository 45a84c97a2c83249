import { describe, expect, it } from "vitest";
import { CommandSyntaxError, splitCommandLine } from "./split-command-line.js";

describe("splitCommandLine", () => {
  it.each([
    ["ls", ["ls"]],
    ["  ls \t -la   src ", ["ls", "-la", "src"]],
    ["echo 'a b' c", ["echo", "a b", "c"]],
    [`echo 'it''s'`, ["echo", "its"]],
    [`echo 'single $HOME | * "quoted" \\n'`, ["echo", 'single $HOME | * "quoted" \\n']],
    [`echo "a b" "c"d`, ["echo", "a b", "cd"]],
    [`echo "say \\"hi\\"" "back\\\\slash" "\\$5" "\\\`"`, ["echo", 'say "hi"', "back\\slash", "$5", "`"]],
    [`echo "keep \\n and \\a"`, ["echo", "keep \\n and \\a"]],
    ["echo a\\ b \\| \\; \\* \\$x \\~", ["echo", "a b", "|", ";", "*", "$x", "~"]],
    ["echo '' \"\" x", ["echo", "", "", "x"]],
    ["echo 'a\nb' \"c\nd\"", ["echo", "a\nb", "c\nd"]],
    ["echo long\\\nline", ["echo", "longline"]],
    [
      "echo '|' '&&' ';' '>' '<' '*' '$(x)' '`x`' '~' '#'",
      ["echo", "|", "&&", ";", ">", "<", "*", "$(x)", "`x`", "~", "#"],
    ],
    ["git log --format=%h%x09%s -n 3", ["git", "log", "--format=%h%x09%s", "-n", "3"]],
    ["find . -name x -exec cat {} \\;", ["find", ".", "-name", "x", "-exec", "cat", "{}", ";"]],
    ["echo a~b c#d ]x !y", ["echo", "a~b", "c#d", "]x", "!y"]],
    ["python3 -c 'print(1)'", ["python3", "-c", "print(1)"]],
  ])("splits %j", (line, argv) => {
    expect(splitCommandLine(line)).toEqual(argv);
  });

  it.each([
    ["ls | wc -l", "|", 4],
    ["a || b", "||", 3],
    ["make && make test", "&&", 6],
    ["sleep 5 &", "&", 9],
    ["cd x; ls", ";", 5],
    ["ls\nrm x", "\n", 3],
    ["cat < in.txt", "<", 5],
    ["echo hi > out.txt", ">", 9],
    ["echo hi >> out.txt", ">>", 9],
    ["echo hi 2>err", ">", 10],
    ["echo `id`", "`", 6],
    ["echo $(id)", "$(", 6],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a command line holding ${…}, refused
    ["echo ${HOME}", "${", 6],
    ["echo $HOME/x", "$HOME", 6],
    ["echo 5$", "$", 7],
    ['echo "$HOME"', "$HOME", 7],
    ['echo "`id`"', "`", 7],
    ["rm *.txt", "*", 4],
    ["ls file?.txt", "?", 8],
    ["ls [ab].txt", "[", 4],
    ["cat ~/.ssh/id_rsa", "~", 5],
    ["git commit -m fix #12", "#", 19],
    ["(cd x)", "(", 1],
  ])("refuses %j at its operator", (line, operator, column) => {
    const error = catchError(line);
    expect(error).toMatchObject({ code: "shell.command_syntax", reason: "shell_operator", operator, column });
    expect(error.message).toContain("without a shell");
    expect(error.message).toContain("literally");
  });

  it("tells the model what to do instead", () => {
    expect(catchError("ls | wc").message).toContain("run each program in its own call");
    expect(catchError("echo $HOME").message).toContain("set_env");
    expect(catchError("rm *.txt").message).toContain("list the files first");
    expect(catchError("echo hi > f").message).toContain("returns stdout and stderr");
  });

  it.each([
    ["echo 'open", "'", 6],
    ['echo "open', '"', 6],
    ['echo "ends \\"', '"', 6],
  ])("refuses the unterminated quote in %j", (line, quote, column) => {
    const error = catchError(line);
    expect(error).toMatchObject({ reason: "unterminated_quote", operator: quote, column });
    expect(error.message).toContain("never closed");
  });

  it("refuses a trailing backslash, an empty line and a leading assignment", () => {
    expect(catchError("echo \\")).toMatchObject({ reason: "trailing_backslash" });
    expect(catchError("   ")).toMatchObject({ reason: "empty" });
    expect(catchError("")).toMatchObject({ reason: "empty" });
    const assignment = catchError("FOO=1 env");
    expect(assignment).toMatchObject({ reason: "assignment" });
    expect(assignment.message).toContain("set_env");
    expect(splitCommandLine("env FOO=1")).toEqual(["env", "FOO=1"]);
  });
});

function catchError(line: string): CommandSyntaxError {
  try {
    splitCommandLine(line);
  } catch (error) {
    expect(error).toBeInstanceOf(CommandSyntaxError);
    return error as CommandSyntaxError;
  }
  throw new Error(`expected ${JSON.stringify(line)} to be refused`);
}
