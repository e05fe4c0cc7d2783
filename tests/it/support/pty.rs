//! A real pseudo-terminal for `runbook`, and the screen a person would see in it: the bytes
//! runbook writes are played through a VT100 emulator, so tests check rows of text, not
//! escape codes. The terminal can be resized and sent keys (Ctrl-C is the line discipline's
//! SIGINT, echoed as `^C` as a real terminal does).

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, ExitStatus};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use nix::pty::{Winsize, openpty};

/// How long [`Pty::wait_for`] and [`Pty::finish`] wait before failing the test.
const LIMIT: Duration = Duration::from_secs(60);

/// Rows of the emulated screen: enough that nothing a test looks at scrolls away. The pty
/// itself says [`ROWS`], like a normal window.
const SCREEN_ROWS: u16 = 3000;
/// The rows the program is told its terminal has.
pub const ROWS: u16 = 40;

/// What came out of the terminal, in order: bytes, and the moments it was resized.
enum Chunk {
    Bytes(Vec<u8>),
    Resize(u16),
}

/// `runbook` (or any command) with a pseudo-terminal for stdin, stdout and stderr.
pub struct Pty {
    master: File,
    child: Child,
    output: Arc<Mutex<Vec<Chunk>>>,
    reader: Option<thread::JoinHandle<()>>,
    /// The width the terminal started with.
    cols: u16,
}

fn winsize(cols: u16) -> Winsize {
    Winsize {
        ws_row: ROWS,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

impl Pty {
    /// Starts `cmd` as the leader of a new session whose controlling terminal is a pty `cols`
    /// wide; its stdin, stdout and stderr are the terminal.
    pub fn spawn(mut cmd: Command, cols: u16) -> Pty {
        let pty = openpty(Some(&winsize(cols)), None).expect("open a pty");
        let slave: OwnedFd = pty.slave;
        let dup = || slave.try_clone().expect("dup the pty");
        cmd.stdin(dup()).stdout(dup()).stderr(dup());
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                nix::unistd::setsid().map_err(std::io::Error::from)?;
                if nix::libc::ioctl(0, nix::libc::TIOCSCTTY, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("spawn in a pty");
        drop(slave);
        drop(cmd);
        let master = File::from(pty.master);
        let output = Arc::new(Mutex::new(Vec::new()));
        let reader = {
            let mut master = master.try_clone().expect("dup the pty master");
            let output = Arc::clone(&output);
            thread::spawn(move || {
                let mut buf = [0u8; 8192];
                // EIO once every holder of the terminal has closed it.
                while let Ok(n @ 1..) = master.read(&mut buf) {
                    output.lock().unwrap().push(Chunk::Bytes(buf[..n].to_vec()));
                }
            })
        };
        Pty {
            master,
            child,
            output,
            reader: Some(reader),
            cols,
        }
    }

    /// Types `bytes` (`"\x03"` is Ctrl-C).
    pub fn send(&mut self, bytes: &str) {
        self.master
            .write_all(bytes.as_bytes())
            .expect("write to the pty");
    }

    /// Makes the window `cols` wide; the program gets SIGWINCH.
    pub fn resize(&mut self, cols: u16) {
        let mut out = self.output.lock().unwrap();
        out.push(Chunk::Resize(cols));
        let size = winsize(cols);
        // SAFETY: a valid fd and a valid winsize.
        let done =
            unsafe { nix::libc::ioctl(self.master.as_raw_fd(), nix::libc::TIOCSWINSZ, &size) };
        assert_eq!(done, 0, "TIOCSWINSZ: {}", std::io::Error::last_os_error());
    }

    /// Every byte the program wrote to the terminal (with the terminal's `\r\n` for `\n`).
    pub fn raw(&self) -> Vec<u8> {
        let out = self.output.lock().unwrap();
        out.iter()
            .flat_map(|c| match c {
                Chunk::Bytes(b) => b.as_slice(),
                Chunk::Resize(_) => &[],
            })
            .copied()
            .collect()
    }

    /// The pid of the program in the terminal.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The screen as it is now.
    pub fn screen(&self) -> Screen {
        let out = self.output.lock().unwrap();
        Screen::play(&out, self.cols)
    }

    /// Waits until the screen shows `text`; fails the test, showing the screen, if it never does.
    #[track_caller]
    pub fn wait_for(&self, text: &str) -> Screen {
        let until = Instant::now() + LIMIT;
        loop {
            let screen = self.screen();
            if screen.text().contains(text) {
                return screen;
            }
            assert!(
                Instant::now() < until,
                "{text:?} never appeared; the screen:\n{}",
                screen.text()
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the program to exit and the terminal to be closed; its exit status and the
    /// final screen.
    #[track_caller]
    pub fn finish(self) -> (ExitStatus, Screen) {
        let (status, screen, _) = self.finish_raw();
        (status, screen)
    }

    /// [`Self::finish`], with every byte the program wrote to the terminal.
    #[track_caller]
    pub fn finish_raw(mut self) -> (ExitStatus, Screen, Vec<u8>) {
        let until = Instant::now() + LIMIT;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                break status;
            }
            if Instant::now() > until {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("did not exit; the screen:\n{}", self.screen().text());
            }
            thread::sleep(Duration::from_millis(10));
        };
        // Output written just before the exit is still in the pty.
        let deadline = Instant::now() + Duration::from_secs(5);
        while let Some(reader) = self.reader.take() {
            if reader.is_finished() || Instant::now() > deadline {
                break;
            }
            self.reader = Some(reader);
            thread::sleep(Duration::from_millis(10));
        }
        (status, self.screen(), self.raw())
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// What the program asked of the terminal besides printing: a window title, the clipboard, a
/// bell, a resize.
#[derive(Default)]
struct Asked(Vec<String>);

impl vt100::Callbacks for Asked {
    fn audible_bell(&mut self, _: &mut vt100::Screen) {
        self.0.push("bell".into());
    }
    fn visual_bell(&mut self, _: &mut vt100::Screen) {
        self.0.push("visual bell".into());
    }
    fn resize(&mut self, _: &mut vt100::Screen, size: (u16, u16)) {
        self.0.push(format!("resize to {size:?}"));
    }
    fn set_window_icon_name(&mut self, _: &mut vt100::Screen, name: &[u8]) {
        self.0
            .push(format!("icon name {:?}", String::from_utf8_lossy(name)));
    }
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.0
            .push(format!("title {:?}", String::from_utf8_lossy(title)));
    }
    fn copy_to_clipboard(&mut self, _: &mut vt100::Screen, _: &[u8], data: &[u8]) {
        self.0
            .push(format!("clipboard {:?}", String::from_utf8_lossy(data)));
    }
    fn paste_from_clipboard(&mut self, _: &mut vt100::Screen, _: &[u8]) {
        self.0.push("paste".into());
    }
    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        self.0.push(format!("osc {params:?}"));
    }
}

/// How one cell of the screen is drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub text: String,
    pub fg: vt100::Color,
    pub bg: vt100::Color,
    pub bold: bool,
    pub dim: bool,
    pub inverse: bool,
    pub underline: bool,
}

/// What a person sees in the terminal: its rows of text, top to bottom, the cursor's place.
pub struct Screen {
    rows: Vec<String>,
    /// The cells of those rows.
    cells: Vec<Vec<Cell>>,
    /// What the program asked of the terminal besides printing, in order.
    pub asked: Vec<String>,
    /// Whether the alternate screen is on at the end.
    pub alternate: bool,
    /// Whether each row's text went on past the window's edge onto the next row.
    wrapped: Vec<bool>,
    /// Row and column of the cursor.
    pub cursor: (u16, u16),
}

impl Screen {
    /// Plays the terminal's output through the emulator, resizing where it was resized.
    fn play(chunks: &[Chunk], cols: u16) -> Screen {
        let size = |n: u16| std::num::NonZeroU16::new(n).expect("a non-zero size");
        let mut parser =
            vt100::Parser::new_with_callbacks(size(SCREEN_ROWS), size(cols), 0, Asked::default());
        for chunk in chunks {
            match chunk {
                Chunk::Bytes(bytes) => parser.process(bytes),
                Chunk::Resize(cols) => parser.screen_mut().set_size(size(SCREEN_ROWS), size(*cols)),
            }
        }
        let screen = parser.screen();
        let width = screen.size().1.get();
        let mut rows: Vec<String> = screen
            .rows(0, width)
            .map(|r| r.trim_end().to_owned())
            .collect();
        while rows.last().is_some_and(String::is_empty) {
            rows.pop();
        }
        // A row that was filled to the edge and wrapped (not padded with spaces that then wrap).
        let wrapped = rows
            .iter()
            .enumerate()
            .map(|(r, _)| {
                let r = u16::try_from(r).expect("a screen row");
                screen.row_wrapped(r)
                    && screen
                        .cell(r, width - 1)
                        .is_some_and(|c| c.has_contents() && c.contents() != " ")
            })
            .collect();
        let cells = (0..rows.len())
            .map(|r| {
                let r = u16::try_from(r).expect("a screen row");
                (0..width)
                    .filter_map(|c| screen.cell(r, c))
                    .map(|c| Cell {
                        text: c.contents().to_owned(),
                        fg: c.fgcolor(),
                        bg: c.bgcolor(),
                        bold: c.bold(),
                        dim: c.dim(),
                        inverse: c.inverse(),
                        underline: c.underline(),
                    })
                    .collect()
            })
            .collect();
        Screen {
            rows,
            cells,
            asked: parser.callbacks().0.clone(),
            alternate: screen.alternate_screen(),
            wrapped,
            cursor: screen.cursor_position(),
        }
    }

    /// The cells showing `text` (ASCII), where it first shows.
    pub fn cells_of(&self, text: &str) -> Option<&[Cell]> {
        let n = text.chars().count();
        self.cells.iter().find_map(|row| {
            (0..row.len().saturating_sub(n - 1)).find_map(|start| {
                let run = &row[start..start + n];
                run.iter()
                    .zip(text.chars())
                    .all(|(cell, c)| cell.text == c.to_string())
                    .then_some(run)
            })
        })
    }

    /// Every cell of the screen.
    pub fn all_cells(&self) -> impl Iterator<Item = &Cell> {
        self.cells.iter().flatten()
    }

    /// The rows, empty ones at the end left out.
    pub fn rows(&self) -> &[String] {
        &self.rows
    }

    /// The rows the terminal wrapped because they ran past its last column.
    pub fn wrapped_rows(&self) -> Vec<&str> {
        self.rows
            .iter()
            .zip(&self.wrapped)
            .filter(|(_, w)| **w)
            .map(|(r, _)| r.as_str())
            .collect()
    }

    /// Whether the terminal wrapped row `r` because it ran past the last column.
    pub fn is_wrapped(&self, r: usize) -> bool {
        self.wrapped.get(r).copied().unwrap_or(false)
    }

    /// Whether some row is as `wanted` says.
    pub fn has_row(&self, wanted: impl Fn(&str) -> bool) -> bool {
        self.rows.iter().any(|r| wanted(r))
    }

    /// The whole screen as text, a row a line.
    pub fn text(&self) -> String {
        self.rows.join("\n")
    }

    /// The text of the screen as one line: rows the terminal wrapped are joined as they were
    /// written, the others (and the indents of rows runbook broke) by one space. What a person
    /// reads, whatever the width.
    pub fn joined(&self) -> String {
        let mut out = String::new();
        let mut glued = false;
        for (row, wrapped) in self.rows.iter().zip(&self.wrapped) {
            if glued {
                out.push_str(row);
            } else {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(row.trim_start());
            }
            glued = *wrapped;
            if !glued {
                while out.ends_with(' ') {
                    out.pop();
                }
            }
        }
        out
    }
}
