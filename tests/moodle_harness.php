<?php
// Runs Moodle's own grading-worksheet importer over a CSV, outside Moodle (tests/test_lms_importers.py).
//
// Usage: php tests/moodle_harness.php JOB.json
//   JOB: {"src": a Moodle source tree, "langs": a folder holding <lang>/*.php language packs (or null),
//         "lang": "en" | "ru", "csv": the worksheet to import, "maxgrade": the assignment's Maximum grade,
//         "participants": {participant id: user id}, "current": {user id: {"grade": g, "timemodified": t}}}
// Prints JSON: {"moodle": the tree's $release, "init": what the importer's init() returned, "columns": the header
// it read, "csv_error": the csv reader's error, "rows": [{"user", "grade", "modified"}], "outcome": {user id:
// {"taken": bool, "grade": float|null, "why": the skip rule that held}}}.
//
// What runs is Moodle's: the importer class (mod/assign/feedback/offline/importgradeslib.php) and its CSV reader
// (lib/csvlib.class.php, csv_import_reader), both included from the tree, with the language strings read from the
// tree's own files (lang/en/*.php, mod/assign/lang/en/assign.php) and the language pack's (<langs>/ru/*.php) the
// way Moodle's string manager layers them (English first, the pack over it). What this file provides is what
// those two need from the rest of Moodle and nothing more: get_string, core_text's two calls, make_temp_directory,
// the group API (no groups) and the `assign` object (participants, the participant-id mapping, current grades).
// The decision process_import_grades() takes for each row the importer yields
// (mod/assign/feedback/offline/locallib.php, with unformat_float from lib/moodlelib.php) needs the database, so
// it is restated below, rule by rule, in Moodle's order; nothing of Moodle's code is copied into the kit.

error_reporting(E_ALL);
define('MOODLE_INTERNAL', 1);

$job = json_decode(file_get_contents($argv[1]), true);
$SRC = rtrim($job['src'], '/');
$LANG = $job['lang'];
$LANGS = $job['langs'];

$CFG = new stdClass();
$CFG->dirroot = $SRC;
$CFG->libdir = $SRC . '/lib';
$CFG->tempdir = sys_get_temp_dir() . '/rl4llm-moodle-' . getmypid();
$USER = (object) ['id' => 2];

// ---------------------------------------------------------------------------------------------- the strings
$STRINGS = [];

/** The file of a component's strings in a language: the tree's English, or the language pack's. */
function string_file($component, $language) {
    global $SRC, $LANGS;
    if ($language === 'en') {
        if ($component === 'assign') {
            return "$SRC/mod/assign/lang/en/assign.php";
        }
        if (strpos($component, 'assignfeedback_') === 0) {
            $plugin = substr($component, strlen('assignfeedback_'));
            return "$SRC/mod/assign/feedback/$plugin/lang/en/$component.php";
        }
        return "$SRC/lang/en/$component.php";
    }
    return $LANGS === null ? null : "$LANGS/$language/$component.php";
}

/** A component's strings as Moodle's string manager gives them: English, the language's own over it. */
function strings_of($component) {
    global $STRINGS, $LANG;
    if (!isset($STRINGS[$component])) {
        $all = [];
        foreach (array_unique(['en', $LANG]) as $language) {
            $file = string_file($component, $language);
            if ($file !== null && is_file($file)) {
                $string = [];
                include($file);
                $all = array_merge($all, $string);
            } else if ($language !== 'en') {
                fwrite(STDERR, "no $language strings for $component at $file\n");
                exit(3);
            }
        }
        $STRINGS[$component] = $all;
    }
    return $STRINGS[$component];
}

function get_string($identifier, $component = '', $a = null) {
    $component = ($component === '' || $component === 'core' || $component === 'mod_assign')
        ? ($component === 'mod_assign' ? 'assign' : 'moodle') : $component;
    $strings = strings_of($component);
    if (!array_key_exists($identifier, $strings)) {
        return "[[$identifier]]";  // what Moodle shows for a missing string
    }
    return $strings[$identifier];
}

// ---------------------------------------------------------------------- what the importer needs of Moodle
class core_text {
    const UTF8_BOM = "\xef\xbb\xbf";

    public static function convert($text, $fromcs, $tocs = 'utf-8') {
        $fromcs = strtolower($fromcs);
        return ($fromcs === strtolower($tocs)) ? $text : iconv($fromcs, $tocs . '//TRANSLIT', $text);
    }

    public static function trim_utf8_bom($str) {
        return strpos($str, self::UTF8_BOM) === 0 ? substr($str, strlen(self::UTF8_BOM)) : $str;
    }
}

function make_temp_directory($directory) {
    global $CFG;
    $path = $CFG->tempdir . '/' . trim($directory, '/');
    if (!is_dir($path)) {
        mkdir($path, 0777, true);
    }
    return $path;
}

function remove_dir($directory) {
    return true;
}

function groups_get_activity_groupmode($cm) {
    return 0;  // no groups: every participant is a valid user
}

/** The assignment: its participants, the participant-id mapping (assign_user_mapping), current grades. */
class assign {
    public $participants;  // participant id => user id
    public $current;       // user id => {grade, timemodified}

    public $maxgrade;      // the assignment's Maximum grade

    public function __construct($participants, $current, $maxgrade) {
        $this->participants = $participants;
        $this->current = $current;
        $this->maxgrade = $maxgrade;
    }

    public function get_instance() {
        return (object) ['id' => 1, 'grade' => $this->maxgrade, 'teamsubmission' => 0, 'blindmarking' => 0];
    }

    public function get_feedback_plugins() {
        return [];
    }

    public function get_course_module() {
        return (object) ['id' => 1];
    }

    public function list_participants($groupid, $idsonly) {
        $users = [];
        foreach ($this->participants as $userid) {
            $users[$userid] = (object) ['id' => $userid];
        }
        return $users;
    }

    /** assign::get_user_id_for_uniqueid: the user of a participant id (the mapping table's primary key). The
     * database compares the id as an integer column; this accepts only the canonical digits, so an id the
     * importer cut wrongly (" 1201", "t 1201") is no one's here, however lenient a database's cast. */
    public function get_user_id_for_uniqueid($uniqueid) {
        if (is_string($uniqueid) && ctype_digit($uniqueid) && isset($this->participants[$uniqueid])) {
            return $this->participants[$uniqueid];
        }
        return false;
    }
}

require_once("$SRC/lib/csvlib.class.php");
require_once("$SRC/mod/assign/feedback/offline/importgradeslib.php");

$release = '';  // the tree's release, named in the result (version.php reads Moodle's maturity constants)
foreach (['MATURITY_ALPHA' => 50, 'MATURITY_BETA' => 100, 'MATURITY_RC' => 150, 'MATURITY_STABLE' => 200] as $name => $value) {
    defined($name) || define($name, $value);
}
if (is_file("$SRC/version.php")) {
    include("$SRC/version.php");
}

// ----------------------------------------------------------------------------------------------- the import
$participants = [];
foreach ($job['participants'] as $uniqueid => $userid) {
    $participants[(string) $uniqueid] = (int) $userid;
}
$current = [];
foreach ($job['current'] as $userid => $grade) {
    $current[(int) $userid] = (object) $grade;
}
$assignment = new assign($participants, $current, $job['maxgrade']);

$importid = csv_import_reader::get_new_iid('assignfeedback_offline');
$importer = new assignfeedback_offline_grade_importer($importid, $assignment);
$importer->parsecsv(file_get_contents($job['csv']));
$init = $importer->init();
$columns = (new csv_import_reader($importid, 'assignfeedback_offline'))->get_columns();

/** lib/moodlelib.php unformat_float: spaces out, the language's decimal separator read as '.', cast. */
function as_float($localefloat) {
    $localefloat = trim((string) $localefloat);
    if ($localefloat == '') {
        return null;
    }
    $localefloat = str_replace(' ', '', $localefloat);
    $localefloat = str_replace(get_string('decsep', 'langconfig'), '.', $localefloat);
    return (float) $localefloat;
}

// the importer ignores what its reader's load said; the same load again, to say why a file gave no rows
$probe = new csv_import_reader(csv_import_reader::get_new_iid('rl4llm_probe'), 'rl4llm_probe');
$probe->load_csv_content(file_get_contents($job['csv']), 'utf-8', 'comma');
$csverror = $probe->get_error();

$rows = [];
$outcome = [];
if ($init) {
    while ($record = $importer->next()) {
        $userid = $record->user->id;
        $rows[] = ['user' => $userid, 'grade' => $record->grade, 'modified' => $record->modified];
        // process_import_grades (mod/assign/feedback/offline/locallib.php), no scale, nothing locked, the
        // "ignore modified" box unticked: its five skip rules in its order.
        $usergrade = isset($current[$userid]) ? $current[$userid] : false;
        $grade = as_float($record->grade);
        $stale = ($usergrade && $usergrade->timemodified > ($record->modified + 60));
        $why = null;
        if ($usergrade && $usergrade->grade == $grade) {
            $why = 'grade not modified';
        } else if (!isset($grade) || $grade === '' || $grade < 0) {
            $why = 'grade has no value';
        } else if ($stale) {
            $why = 'grade has been modified in Moodle since';
        } else if (($job['maxgrade'] > -1) && (($grade < 0) || ($grade > $job['maxgrade']))) {
            $why = 'out of range';
        }
        $outcome[$userid] = ['taken' => $why === null, 'grade' => $grade, 'why' => $why];
    }
    $importer->close(true);
}

echo json_encode(['moodle' => $release, 'init' => $init, 'columns' => $columns, 'csv_error' => $csverror,
                  'rows' => $rows,
                  'outcome' => (object) $outcome], JSON_UNESCAPED_UNICODE), "\n";
