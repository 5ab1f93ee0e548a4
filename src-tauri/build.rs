// The app's commands get generated permissions, so that only the commands the main window's
// capability names can be called from the webview.
include!("src/command_list.rs");

fn main() {
    let manifest = tauri_build::AppManifest::new().commands(APP_COMMANDS);
    tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest))
        .expect("the Tauri configuration, capabilities and icons must be valid");
}
