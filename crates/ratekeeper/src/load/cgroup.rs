//! Where the process's cgroup lives: `/proc/self/cgroup` says which group
//! it is in on each hierarchy, `/proc/self/mountinfo` where each hierarchy
//! is mounted (cgroups(7), proc(5)). Only [`CpuReader::detect`](super::CpuReader::detect)
//! uses this, once, so it may allocate.

use std::path::{Path, PathBuf};

/// One line of `/proc/self/cgroup`: `hierarchy-ID:controller-list:path`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Membership {
    /// The hierarchy's ID: 0 is the cgroup v2 (unified) hierarchy.
    pub(crate) hierarchy: u32,
    /// The v1 controllers bound to the hierarchy, comma-separated (for
    /// example `cpu,cpuacct` or `name=systemd`); empty on v2.
    pub(crate) controllers: String,
    /// The group's path from the hierarchy's root as the process sees it.
    pub(crate) path: String,
}

impl Membership {
    /// Whether this is the cgroup v2 hierarchy (`0::/path`).
    pub(crate) fn is_v2(&self) -> bool {
        self.hierarchy == 0 && self.controllers.is_empty()
    }

    /// Whether the v1 controller `name` is bound to this hierarchy.
    pub(crate) fn has_controller(&self, name: &str) -> bool {
        !self.is_v2() && has_item(&self.controllers, name)
    }
}

/// A cgroup file system from `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CgroupMount {
    /// `cgroup2` (v2) or else `cgroup` (v1).
    pub(crate) v2: bool,
    /// The group shown at the mount point, from the hierarchy's root (a
    /// container usually sees its own group mounted: `/docker/<id>`).
    pub(crate) root: String,
    /// Where it is mounted, absolute.
    pub(crate) mount_point: String,
    /// The super block's options: a v1 mount's controllers are among them.
    pub(crate) super_options: String,
}

impl CgroupMount {
    /// Whether this is a v1 mount of the controller `name`.
    pub(crate) fn has_controller(&self, name: &str) -> bool {
        !self.v2 && has_item(&self.super_options, name)
    }
}

/// Whether the comma-separated `list` holds `item`.
fn has_item(list: &str, item: &str) -> bool {
    list.split(',').any(|x| x == item)
}

/// Parses `/proc/self/cgroup`.
pub(crate) fn parse_memberships(text: &str) -> Result<Vec<Membership>, &'static str> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        // The path is last and may itself hold a ':'.
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (fields.next(), fields.next(), fields.next()) else {
            return Err("a line is not hierarchy-ID:controllers:path");
        };
        let hierarchy = id.parse().map_err(|_| "a hierarchy ID is not a number")?;
        if !path.starts_with('/') {
            return Err("a cgroup path is not absolute");
        }
        out.push(Membership { hierarchy, controllers: controllers.to_owned(), path: path.to_owned() });
    }
    Ok(out)
}

/// Parses the cgroup mounts out of `/proc/self/mountinfo`, whose lines are
/// `ID PARENT MAJ:MIN ROOT MOUNT-POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER-OPTIONS`.
pub(crate) fn parse_cgroup_mounts(text: &str) -> Result<Vec<CgroupMount>, &'static str> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split_ascii_whitespace().collect();
        let separator = fields.iter().position(|f| *f == "-").ok_or("a mountinfo line has no ' - ' separator")?;
        if separator < 6 || fields.len() < separator + 3 {
            return Err("a mountinfo line has too few fields");
        }
        let v2 = match fields[separator + 1] {
            "cgroup2" => true,
            "cgroup" => false,
            _ => continue,
        };
        out.push(CgroupMount {
            v2,
            root: unescape(fields[3]),
            mount_point: unescape(fields[4]),
            super_options: fields[separator + 3].to_owned(),
        });
    }
    Ok(out)
}

/// Undoes mountinfo's octal escapes (`\040` for a space, `\011`, `\012`,
/// `\134` for a backslash); anything else is kept as it is.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) if bytes[i] == b'\\' && d[0] <= b'3' => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            _ => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| field.to_owned())
}

/// The directories of the group at `path` on a hierarchy mounted at
/// `mount_point` showing the group `mount_root`: the group's own directory
/// first, then each parent up to the mount point, all under `root`.
///
/// When the group is not below the mounted one (a container that sees its
/// own group mounted at the top but its full path in `/proc/self/cgroup`,
/// or a path with `..` from a cgroup namespace), the mount point alone is
/// returned: it is the nearest group the process can see (Kratos does the
/// same for containers).
pub(crate) fn group_dirs(root: &Path, mount_root: &str, mount_point: &str, path: &str) -> Vec<PathBuf> {
    let top = under(root, mount_point);
    let relative = if mount_root == "/" {
        Some(path)
    } else if path == mount_root {
        Some("")
    } else {
        path.strip_prefix(mount_root).filter(|rest| rest.starts_with('/'))
    };
    let mut dirs = vec![top.clone()];
    if let Some(relative) = relative.filter(|r| !r.split('/').any(|c| c == "..")) {
        let mut dir = top;
        for component in relative.split('/').filter(|c| !c.is_empty() && *c != ".") {
            dir.push(component);
            dirs.push(dir.clone());
        }
    }
    dirs.reverse();
    dirs
}

/// `absolute` (a path as the process sees it) under `root`.
pub(crate) fn under(root: &Path, absolute: &str) -> PathBuf {
    root.join(absolute.trim_start_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memberships_of_a_hybrid_machine() {
        let text = "12:cpu,cpuacct:/docker/abc\n3:name=systemd:/x:y\n0::/user.slice\n";
        let m = parse_memberships(text).unwrap();
        assert_eq!(m.len(), 3);
        assert!(m[0].has_controller("cpuacct") && m[0].has_controller("cpu") && !m[0].has_controller("cpuset"));
        assert_eq!(m[1].path, "/x:y");
        assert!(m[2].is_v2() && !m[2].has_controller("cpu"));
        assert!(parse_memberships("cpu:/").is_err());
        assert!(parse_memberships("x:cpu:/").is_err());
        assert!(parse_memberships("1:cpu:relative").is_err());
    }

    #[test]
    fn mounts_keep_only_cgroups_and_unescape() {
        let text = "\
22 1 0:21 / /proc rw,nosuid shared:12 - proc proc rw
31 23 0:28 / /sys/fs/cgroup ro shared:9 - tmpfs tmpfs ro,mode=755
32 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw master:3 - cgroup cgroup rw,cpu,cpuacct
41 31 0:38 / /sys/fs/cgroup/my\\040dir rw - cgroup2 cgroup2 rw,nsdelegate
";
        let m = parse_cgroup_mounts(text).unwrap();
        assert_eq!(m.len(), 2);
        assert!(m[0].has_controller("cpuacct") && !m[0].v2 && m[0].root == "/docker/abc");
        assert!(m[1].v2 && !m[1].has_controller("cpu"));
        assert_eq!(m[1].mount_point, "/sys/fs/cgroup/my dir");
        assert!(parse_cgroup_mounts("1 2 3 / /x rw cgroup cgroup rw").is_err());
        assert_eq!(unescape("a\\134b\\9"), "a\\b\\9");
    }

    #[test]
    fn group_dirs_walk_up_to_the_mount_point() {
        let root = Path::new("/fx");
        let dirs = group_dirs(root, "/", "/sys/fs/cgroup", "/kubepods.slice/pod1.slice/c.scope");
        let want: Vec<PathBuf> = [
            "/fx/sys/fs/cgroup/kubepods.slice/pod1.slice/c.scope",
            "/fx/sys/fs/cgroup/kubepods.slice/pod1.slice",
            "/fx/sys/fs/cgroup/kubepods.slice",
            "/fx/sys/fs/cgroup",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(dirs, want);
        // The group below the mounted one.
        let dirs = group_dirs(root, "/docker", "/sys/fs/cgroup/cpu", "/docker/abc");
        assert_eq!(dirs, [PathBuf::from("/fx/sys/fs/cgroup/cpu/abc"), PathBuf::from("/fx/sys/fs/cgroup/cpu")]);
        // The mounted group itself, a group elsewhere, a namespace's "..".
        for (mount_root, path) in [("/docker/abc", "/docker/abc"), ("/docker/abc", "/docker/abcd"), ("/", "/../x")] {
            assert_eq!(group_dirs(root, mount_root, "/m", path), [PathBuf::from("/fx/m")], "{mount_root} {path}");
        }
        assert_eq!(group_dirs(root, "/", "/m", "/"), [PathBuf::from("/fx/m")]);
    }
}
