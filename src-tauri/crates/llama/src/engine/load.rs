//! Loading a GGUF: the one llama.cpp backend, the file's checks, the facts a user is shown,
//! the chat template (the file's own, else one by architecture).

use super::*;

fn backend() -> Result<&'static LlamaBackend, LoadError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            LlamaBackend::init()
                .map(|mut b| {
                    // llama.cpp logs every load and decode to stderr; Lantern reports what matters.
                    b.void_logs();
                    b
                })
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| LoadError(format!("llama.cpp could not start: {e}")))
}

/// Physical cores: llama.cpp runs best with one thread per core, not per hyper-thread.
pub fn physical_cores() -> i32 {
    let logical = std::thread::available_parallelism().map_or(1, |n| n.get()) as i32;
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        return logical;
    };
    let mut cores = std::collections::HashSet::new();
    let mut physical = "";
    for line in info.lines() {
        if let Some(v) = line.strip_prefix("physical id") {
            physical = v.trim_start_matches([' ', '\t', ':']);
        } else if let Some(v) = line.strip_prefix("core id") {
            cores.insert((
                physical.to_string(),
                v.trim_start_matches([' ', '\t', ':']).to_string(),
            ));
        }
    }
    if cores.is_empty() {
        logical
    } else {
        (cores.len() as i32).min(logical).max(1)
    }
}

/// Checks what can be checked before llama.cpp sees the file, for clear errors.
fn check_file(path: &Path) -> Result<u64, LoadError> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            LoadError(format!("Model file not found: {}", path.display()))
        }
        _ => LoadError(format!(
            "Cannot read the model file {}: {e}",
            path.display()
        )),
    })?;
    if !meta.is_file() {
        return Err(LoadError(format!("{} is not a file", path.display())));
    }
    let mut magic = [0u8; 4];
    use std::io::Read;
    let read = std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok();
    if !read || &magic != b"GGUF" {
        return Err(LoadError(format!(
            "{} is not a GGUF model file (GGUF files start with the bytes \"GGUF\"); convert it with llama.cpp's convert script or download a .gguf",
            path.display()
        )));
    }
    if let Some(available) = available_memory() {
        if meta.len() > available {
            return Err(LoadError(format!(
                "Not enough memory: the model needs about {} MiB and {} MiB are available",
                meta.len() >> 20,
                available >> 20
            )));
        }
    }
    Ok(meta.len())
}

fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The model's own template, else llama.cpp's built-in one for the architecture, else ChatML.
fn pick_template(model: &LlamaModel, architecture: &str) -> (LlamaChatTemplate, String) {
    if let Ok(t) = model.chat_template(None) {
        return (t, super::OWN_TEMPLATE.to_string());
    }
    let probe = [LlamaChatMessage::new("user".into(), "hi".into()).expect("no NUL")];
    let family: String = architecture
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .to_string();
    for name in [architecture.to_string(), family] {
        if let Ok(t) = LlamaChatTemplate::new(&name) {
            if model.apply_chat_template(&t, &probe, true).is_ok() {
                return (t, format!("built-in {name}"));
            }
        }
    }
    (
        LlamaChatTemplate::new("chatml").expect("no NUL"),
        "chatml".to_string(),
    )
}

impl LocalModel {
    /// Loads a GGUF model. `progress` gets 0.0 ..= 1.0 as the weights load.
    pub fn load(
        options: &LoadOptions,
        progress: impl FnMut(f32) + 'static,
    ) -> Result<Self, LoadError> {
        let started = Instant::now();
        let size_bytes = check_file(&options.path)?;
        let model = Box::new(load_model(options, progress)?);
        let trained_context = model.n_ctx_train();
        let context = context_size(options.context, trained_context)?;
        let threads = options.threads.unwrap_or_else(physical_cores).max(1);
        let flash_attention = flash_attention_for(options.gpu_layers);
        let ctx = context_on(&model, context, threads, flash_attention)?;
        // SAFETY: the context borrows the model. The model is boxed, so its address is stable
        // when the box moves into `Self`; it is never replaced; and it is dropped after the
        // context (field order). The 'static lifetime never escapes this struct.
        let ctx: LlamaContext<'static> = unsafe { std::mem::transmute(ctx) };

        let meta = |key: &str| model.meta_val_str(key).ok().filter(|v| !v.is_empty());
        let architecture = meta("general.architecture").unwrap_or_else(|| "unknown".into());
        let name = readable_name(&meta, &options.path);
        let (template, chat_template) = pick_template(&model, &architecture);
        let source = meta("tokenizer.chat_template");
        let (native, call_path, call_path_why) =
            call_path_of(&model, source.as_deref(), options.native_template);
        let syntax = native.as_ref().map_or(TEXT_PROTOCOL, |n| n.syntax);

        let vocab = model.vocab();
        let tag = vocab.tokenize(syntax.open.as_bytes(), false, false);
        let tag_after_newline =
            vocab.tokenize(format!("\n{}", syntax.open).as_bytes(), false, false);
        let facts = ModelFacts {
            path: options.path.clone(),
            name,
            architecture,
            parameters: model.n_params(),
            size_bytes,
            trained_context,
            context,
            threads,
            vocab_size: model.n_vocab(),
            chat_template,
            call_path,
            call_path_why,
            flash_attention,
            load_seconds: started.elapsed().as_secs_f64(),
        };
        let mut loaded = LocalModel {
            ctx,
            model,
            template,
            native,
            syntax,
            tools: Vec::new(),
            facts,
            settings: Settings::default(),
            grammar: None,
            tag,
            tag_after_newline,
            cached: Vec::new(),
            calibrations: HashMap::new(),
            calibration_file: None,
            last: StepStats::default(),
            closers: None,
            prompt_cache: None,
            prepared: None,
        };
        loaded.facts.load_seconds = started.elapsed().as_secs_f64();
        Ok(loaded)
    }

    pub fn facts(&self) -> &ModelFacts {
        &self.facts
    }
}

/// The model file, read by llama.cpp, `progress` told how far it is.
fn load_model(
    options: &LoadOptions,
    mut progress: impl FnMut(f32) + 'static,
) -> Result<LlamaModel, LoadError> {
    let params = LlamaModelParams::default()
        .with_n_gpu_layers(options.gpu_layers)
        .with_progress_callback(move |p| {
            progress(p);
            true
        });
    LlamaModel::load_from_file(backend()?, &options.path, &params).map_err(|e| {
        LoadError(format!(
            "llama.cpp could not load {}: {e}. The architecture may be unsupported by this build, or the file damaged.",
            options.path.display()
        ))
    })
}

/// Whether llama.cpp may compute attention with its flash-attention kernels: only where layers
/// are offloaded to a GPU back-end built in, which gains from them. On the CPU they are the
/// slower ones, and the more so the longer the conversation: after 4,096 tokens the default
/// model at one thread evaluated a prompt at 40 tokens a second with them and 93 without, and
/// generated at 23 and 54 (llama-bench; `bench/results/2026-11-29-flash-attention.md`).
pub(super) fn flash_attention_for(gpu_layers: u32) -> bool {
    gpu_layers > 0 && cfg!(any(feature = "cuda", feature = "vulkan", feature = "metal"))
}

/// A context of `context` tokens on `model`, computed with `threads` threads, with flash
/// attention where llama.cpp finds it fits, or never.
fn context_on(
    model: &LlamaModel,
    context: u32,
    threads: i32,
    flash_attention: bool,
) -> Result<LlamaContext<'_>, LoadError> {
    let attention = match flash_attention {
        true => llama_cpp_sys_2::LLAMA_FLASH_ATTN_TYPE_AUTO,
        false => llama_cpp_sys_2::LLAMA_FLASH_ATTN_TYPE_DISABLED,
    };
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(context))
        .with_n_batch(512)
        .with_n_ubatch(512)
        .with_n_threads(threads)
        .with_n_threads_batch(threads)
        .with_flash_attention_policy(attention);
    model.new_context(backend()?, params).map_err(|e| {
        LoadError(format!(
            "Could not create a {context}-token context ({e}); try a smaller context"
        ))
    })
}

/// The model's name as a person reads it. A GGUF's `general.name` is the name its maker gave,
/// unless the converter made it up from the basename, size and fine-tune labels of a training
/// folder ("Smollm2 135M 8k Lc100K Mix1 Ep2"); then the file's name, which keeps the
/// publisher's own spelling ("SmolLM2-135M-Instruct.Q4_1.gguf"), is read instead when it has
/// that spelling (capitals and small letters both). A lower-case file name
/// ("gemma-3-270m-q4_k_m.gguf") gives way to `general.name` either way.
fn readable_name(meta: &dyn Fn(&str) -> Option<String>, path: &Path) -> String {
    let general_name = meta("general.name");
    let squeezed = |text: &str| -> String {
        text.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let made_up = ["general.basename", "general.size_label", "general.finetune"]
        .iter()
        .filter_map(|key| meta(key))
        .collect::<String>();
    let converters = general_name
        .as_deref()
        .is_some_and(|name| !made_up.is_empty() && squeezed(name) == squeezed(&made_up));
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut stem = file.strip_suffix(".gguf").unwrap_or(&file).to_string();
    // The quantisation label ("Q4_1", "q4_k_m", "IQ3_XS", "F16", "BF16"), then copies'
    // lower-case tags (".tools", ".llama3-tools").
    let is_quant = |label: &str| {
        let label = label.to_ascii_uppercase();
        let numbered = ["Q", "IQ"].iter().any(|p| {
            label
                .strip_prefix(p)
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        });
        (numbered || ["F16", "BF16", "F32", "FP16", "FP32"].contains(&label.as_str()))
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let quant_at = stem
        .char_indices()
        .find(|&(i, c)| matches!(c, '.' | '-' | '_') && i > 0 && is_quant(&stem[i + 1..]))
        .map(|(i, _)| i);
    if let Some(at) = quant_at {
        stem.truncate(at);
    }
    while let Some(at) = stem.rfind('.') {
        let tag = &stem[at + 1..];
        let is_tag = tag.starts_with(|c: char| c.is_ascii_lowercase())
            && tag
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !is_tag {
            break;
        }
        stem.truncate(at);
    }
    let spelled = stem.chars().any(|c| c.is_uppercase()) && stem.chars().any(|c| c.is_lowercase());
    match general_name {
        Some(name) if !spelled || !converters => name,
        _ => stem.replace(['-', '_'], " "),
    }
}

/// The context to create: the one asked for, when the model was trained for it, or the
/// default within what it was trained for.
fn context_size(asked: Option<u32>, trained_context: u32) -> Result<u32, LoadError> {
    match asked {
        Some(n) if n > trained_context => Err(LoadError(format!(
            "A context of {n} tokens is larger than the {trained_context} this model was trained for"
        ))),
        Some(0) => Err(LoadError("The context size must be at least 1 token".into())),
        Some(n) => Ok(n),
        None => Ok(DEFAULT_CONTEXT.min(trained_context)),
    }
}

/// How the model's calls travel: by its own chat template (`source`) when it has one that can
/// render tools and `native` is allowed, else by the text protocol; and why, in words.
fn call_path_of(
    model: &LlamaModel,
    source: Option<&str>,
    native: bool,
) -> (Option<NativeTemplate>, CallPath, String) {
    let template = match (source, native) {
        (_, false) => Err("the text protocol was chosen for this model".to_string()),
        (None, true) => Err("the model has no chat template of its own".to_string()),
        (Some(source), true) => {
            let vocab = model.vocab();
            let text_of = |token: LlamaToken| {
                String::from_utf8_lossy(&vocab.token_to_piece(token, true, None)).into_owned()
            };
            NativeTemplate::new(source, &text_of(vocab.bos()), &text_of(vocab.eos()))
        }
    };
    match template {
        Ok(native) => {
            let mut why = format!(
                "native — the model's own chat template renders the tools; its calls ({}…{}) are constrained by the grammar",
                native.syntax.open, native.syntax.close
            );
            if native.thinks {
                why.push_str(", after it thinks (within the thinking budget)");
            }
            (Some(native), CallPath::Native, why)
        }
        Err(why) => (
            None,
            CallPath::Text,
            format!("text protocol, constrained by the grammar — {why}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::readable_name;
    use std::path::Path;

    #[test]
    fn a_model_is_named_as_its_maker_or_its_publisher_spells_it() {
        // (general.name, general.basename, general.size_label, general.finetune, file, name)
        let smol = Some("Smollm2 135M 8k Lc100K Mix1 Ep2");
        let smol_labels = (Some("smollm2"), Some("135M"), Some("8k-lc100k-mix1-ep2"));
        let cases = [
            (
                smol,
                smol_labels,
                "models/SmolLM2-135M-Instruct.Q4_1.gguf",
                "SmolLM2 135M Instruct",
            ),
            (
                Some("SmolLM2-135M-Instruct (tool-aware template)"),
                smol_labels,
                "SmolLM2-135M-Instruct.tools.Q4_1.gguf",
                "SmolLM2-135M-Instruct (tool-aware template)",
            ),
            (
                Some("Gemma 3 270m"),
                (Some("gemma-3"), Some("270M"), None),
                "gemma-3-270m-q4_k_m.gguf",
                "Gemma 3 270m",
            ),
            (
                None,
                (None, None, None),
                "gemma-3-270m-q4_k_m.gguf",
                "gemma 3 270m",
            ),
            (
                Some("Qwen2.5 0.5B Instruct"),
                (Some("Qwen2.5"), Some("0.5B"), Some("Instruct")),
                "Qwen2.5-0.5B-Instruct-Q4_K_M.gguf",
                "Qwen2.5 0.5B Instruct",
            ),
            (
                Some("Phi 3 Mini 4k Instruct"),
                (Some("phi-3"), Some("mini"), Some("4k-instruct")),
                "Phi-3-mini-4k-instruct-fp16.gguf",
                "Phi 3 mini 4k instruct",
            ),
        ];
        for (general, (base, size, finetune), file, want) in cases {
            let meta = |key: &str| {
                match key {
                    "general.name" => general,
                    "general.basename" => base,
                    "general.size_label" => size,
                    "general.finetune" => finetune,
                    _ => None,
                }
                .map(str::to_string)
            };
            assert_eq!(readable_name(&meta, Path::new(file)), want, "{file}");
        }
    }
}
