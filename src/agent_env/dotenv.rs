//! `.env` files: `NAME=value` assignments, one a line, with an optional `export `, `#` comments,
//! single quotes (taken literally), double quotes (escapes, may span lines) and `${VAR}`
//! references to the environment runbook was started from.

pub(crate) use crate::config::is_var_name;

/// One assignment, with the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Assignment {
    pub name: String,
    pub value: String,
    pub line: u32,
}

/// What is wrong, and at which byte of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseError {
    pub offset: usize,
    pub message: String,
}

/// Reads every assignment of `text`, resolving `${VAR}` with `lookup`.
pub(crate) fn parse(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Assignment>, ParseError> {
    let mut p = Parser {
        text,
        at: 0,
        lookup,
    };
    let mut out = Vec::new();
    loop {
        p.skip(|c| c.is_whitespace());
        match p.peek() {
            None => return Ok(out),
            Some('#') => p.skip(|c| c != '\n'),
            Some(_) => out.push(p.assignment()?),
        }
    }
}

/// `text` with its `${VAR}` references resolved; the error's offset is into `text`.
pub(crate) fn expand(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ParseError> {
    let mut p = Parser {
        text,
        at: 0,
        lookup,
    };
    let mut out = String::new();
    while let Some(c) = p.peek() {
        if p.rest().starts_with("${") {
            out.push_str(&p.reference()?);
        } else {
            out.push(c);
            p.at += c.len_utf8();
        }
    }
    Ok(out)
}

struct Parser<'a> {
    text: &'a str,
    at: usize,
    lookup: &'a dyn Fn(&str) -> Option<String>,
}

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn skip(&mut self, keep_going: impl Fn(char) -> bool) {
        while let Some(c) = self.peek().filter(|c| keep_going(*c)) {
            self.at += c.len_utf8();
        }
    }

    fn skip_blanks(&mut self) {
        self.skip(|c| c == ' ' || c == '\t');
    }

    fn error<T>(&self, offset: usize, message: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError {
            offset,
            message: message.into(),
        })
    }

    fn assignment(&mut self) -> Result<Assignment, ParseError> {
        let line =
            u32::try_from(self.text[..self.at].matches('\n').count() + 1).unwrap_or(u32::MAX);
        if let Some(after) = self.rest().strip_prefix("export")
            && after.starts_with([' ', '\t'])
        {
            self.at += "export".len();
            self.skip_blanks();
        }
        let start = self.at;
        self.skip(|c| c.is_ascii_alphanumeric() || c == '_');
        let name = &self.text[start..self.at];
        if !is_var_name(name) {
            return self.error(start, "expected NAME=VALUE, where NAME has letters, digits and _ and does not start with a digit");
        }
        self.skip_blanks();
        if self.peek() != Some('=') {
            return self.error(self.at, format!("expected `=` after `{name}`"));
        }
        self.at += 1;
        self.skip_blanks();
        let value = match self.peek() {
            Some('\'') => self.single_quoted()?,
            Some('"') => self.double_quoted()?,
            _ => {
                return Ok(Assignment {
                    name: name.to_owned(),
                    value: self.unquoted()?,
                    line,
                });
            }
        };
        // After a closing quote: only blanks and a comment.
        self.skip_blanks();
        if self.peek() == Some('#') {
            self.skip(|c| c != '\n');
        }
        if !matches!(self.peek(), None | Some('\n' | '\r')) {
            return self.error(
                self.at,
                "expected the end of the line after the closing quote",
            );
        }
        Ok(Assignment {
            name: name.to_owned(),
            value,
            line,
        })
    }

    fn single_quoted(&mut self) -> Result<String, ParseError> {
        let open = self.at;
        self.at += 1;
        match self.rest().find('\'') {
            Some(len) => {
                let value = self.rest()[..len].to_owned();
                self.at += len + 1;
                Ok(value)
            }
            None => self.error(open, "this ' is never closed"),
        }
    }

    fn double_quoted(&mut self) -> Result<String, ParseError> {
        let open = self.at;
        self.at += 1;
        let mut value = String::new();
        loop {
            let Some(c) = self.peek() else {
                return self.error(open, "this \" is never closed");
            };
            if c == '"' {
                self.at += 1;
                return Ok(value);
            }
            if self.rest().starts_with("${") {
                value.push_str(&self.reference()?);
                continue;
            }
            self.at += c.len_utf8();
            if c == '\\' {
                let escaped = self.peek();
                match escaped {
                    Some('n') => value.push('\n'),
                    Some('r') => value.push('\r'),
                    Some('t') => value.push('\t'),
                    Some(e @ ('"' | '\\' | '$')) => value.push(e),
                    _ => {
                        value.push('\\');
                        continue;
                    }
                }
                self.at += 1;
            } else {
                value.push(c);
            }
        }
    }

    /// Up to the end of the line or a ` #` comment, without trailing blanks.
    fn unquoted(&mut self) -> Result<String, ParseError> {
        let start = self.at;
        let line = self.rest().split('\n').next().unwrap_or("");
        let mut end = line.len();
        for (i, _) in line.match_indices('#') {
            if i == 0 || line[..i].ends_with([' ', '\t']) {
                end = i;
                break;
            }
        }
        let raw = line[..end].trim_end();
        self.at += line.len();
        expand(raw, self.lookup).map_err(|e| ParseError {
            offset: start + e.offset,
            ..e
        })
    }

    /// `${NAME}`, at the parser's position.
    fn reference(&mut self) -> Result<String, ParseError> {
        let start = self.at;
        let Some(len) = self.rest()[2..].find('}') else {
            return self.error(start, "this ${ is never closed with }");
        };
        let name = &self.rest()[2..2 + len];
        if !is_var_name(name) {
            return self.error(
                start,
                format!("`${{{name}}}` does not name a variable; expected ${{NAME}}"),
            );
        }
        let Some(value) = (self.lookup)(name) else {
            return self.error(
                start,
                format!("${{{name}}} is not set in the environment runbook was started from"),
            );
        };
        self.at += len + 3;
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/me".to_owned()),
            "TOKEN" => Some("t0k3n".to_owned()),
            _ => None,
        }
    }

    fn pairs(text: &str) -> Vec<(String, String, u32)> {
        parse(text, &shell)
            .unwrap()
            .into_iter()
            .map(|a| (a.name, a.value, a.line))
            .collect()
    }

    fn error(text: &str) -> (usize, String) {
        let e = parse(text, &shell).unwrap_err();
        (e.offset, e.message)
    }

    #[test]
    fn assignments_read_like_a_shell_would() {
        let text = "\
# a comment
A=plain value   # trailing comment
export B = 'single ${TOKEN} #not a comment'
C=\"double \\\"quoted\\\"\\n${TOKEN}\"  # comment
D=
E=x#y
F=\"two
lines\"
G=${HOME}/cache and \\${TOKEN}
";
        assert_eq!(
            pairs(text),
            [
                ("A".into(), "plain value".into(), 2),
                ("B".into(), "single ${TOKEN} #not a comment".into(), 3),
                ("C".into(), "double \"quoted\"\nt0k3n".into(), 4),
                ("D".into(), String::new(), 5),
                ("E".into(), "x#y".into(), 6),
                ("F".into(), "two\nlines".into(), 7),
                ("G".into(), "/home/me/cache and \\t0k3n".into(), 9),
            ]
        );
    }

    #[test]
    fn malformed_lines_say_where_and_what_was_expected() {
        assert_eq!(
            error("A=1\njust words\n"),
            (9, "expected `=` after `just`".into())
        );
        assert_eq!(error("1A=x").0, 0);
        assert!(error("=x").1.starts_with("expected NAME=VALUE"));
        assert_eq!(error("A='open\n"), (2, "this ' is never closed".into()));
        assert_eq!(
            error("A=\"x\" y"),
            (
                6,
                "expected the end of the line after the closing quote".into()
            )
        );
        assert_eq!(
            error("A=1\nB=a ${NOPE} b"),
            (
                8,
                "${NOPE} is not set in the environment runbook was started from".into()
            )
        );
        assert_eq!(error("B=\"${NOPE\"").0, 3);
        assert!(
            error("B=${not a name}")
                .1
                .contains("does not name a variable")
        );
    }

    #[test]
    fn names_are_checked() {
        assert!(is_var_name("OPENAI_API_KEY"));
        assert!(is_var_name("_x1"));
        assert!(!is_var_name("1X"));
        assert!(!is_var_name("A-B"));
        assert!(!is_var_name(""));
    }
}
