//! Status conditions, mirroring apimachinery's `meta/conditions_test.go`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kcache_controller::conditions::{
    find_status_condition, is_status_condition_false, is_status_condition_present_and_equal,
    is_status_condition_true, new_condition, remove_status_condition, set_status_condition,
};

fn at(secs: i64) -> Time {
    Time(Timestamp::from_second(secs).unwrap())
}

fn cond(type_: &str, status: &str, reason: &str, message: &str, t: i64) -> Condition {
    let mut c = new_condition(type_, status, reason, message, None);
    c.last_transition_time = at(t);
    c
}

#[test]
fn should_add() {
    let mut conditions = vec![cond("first", "True", "", "", 1_000)];
    let before = Timestamp::now();
    assert!(set_status_condition(
        &mut conditions,
        new_condition("second", "True", "Ready", "", None)
    ));
    assert_eq!(conditions.len(), 2);
    assert_eq!(conditions[1].type_, "second");
    assert!(
        conditions[1].last_transition_time.0 >= before,
        "stamped now"
    );
    // A supplied time is kept.
    assert!(set_status_condition(
        &mut conditions,
        cond("third", "False", "", "", 2_000)
    ));
    assert_eq!(conditions[2].last_transition_time, at(2_000));
}

#[test]
fn use_supplied_time_on_a_status_change() {
    let mut conditions = vec![cond("first", "True", "", "", 1_000)];
    assert!(set_status_condition(
        &mut conditions,
        cond("first", "False", "", "", 3_000)
    ));
    assert_eq!(conditions[0].status, "False");
    assert_eq!(conditions[0].last_transition_time, at(3_000));
}

#[test]
fn a_status_change_without_a_time_is_stamped_now() {
    let mut conditions = vec![cond("first", "True", "", "", 1_000)];
    let before = Timestamp::now();
    assert!(set_status_condition(
        &mut conditions,
        new_condition("first", "False", "", "", None)
    ));
    assert!(conditions[0].last_transition_time.0 >= before);
}

#[test]
fn update_fields_without_moving_the_transition_time() {
    let mut conditions = vec![
        cond("first", "True", "", "", 1_000),
        cond("second", "True", "", "", 1_000),
    ];
    let mut new = cond("second", "True", "Reason", "Message", 3_000);
    new.observed_generation = Some(3);
    assert!(set_status_condition(&mut conditions, new));
    let second = &conditions[1];
    assert_eq!(
        second.last_transition_time,
        at(1_000),
        "status unchanged: time unchanged"
    );
    assert_eq!(
        (second.reason.as_str(), second.message.as_str()),
        ("Reason", "Message")
    );
    assert_eq!(second.observed_generation, Some(3));
    // The same again changes nothing.
    let mut same = cond("second", "True", "Reason", "Message", 4_000);
    same.observed_generation = Some(3);
    assert!(!set_status_condition(&mut conditions, same));
    assert_eq!(conditions[1].last_transition_time, at(1_000));
}

#[test]
fn remove() {
    let mut conditions = vec![
        cond("first", "True", "", "", 1),
        cond("second", "True", "", "", 1),
    ];
    assert!(remove_status_condition(&mut conditions, "second"));
    assert_eq!(conditions.len(), 1);
    assert!(!remove_status_condition(&mut conditions, "second"));
    assert!(!remove_status_condition(&mut Vec::new(), "first"));
}

#[test]
fn find_and_predicates() {
    let conditions = vec![
        cond("Ready", "True", "", "", 1),
        cond("Degraded", "False", "", "", 1),
        cond("Progressing", "Unknown", "", "", 1),
    ];
    assert_eq!(
        find_status_condition(&conditions, "Degraded")
            .unwrap()
            .status,
        "False"
    );
    assert!(find_status_condition(&conditions, "Missing").is_none());
    assert!(is_status_condition_true(&conditions, "Ready"));
    assert!(!is_status_condition_true(&conditions, "Degraded"));
    assert!(is_status_condition_false(&conditions, "Degraded"));
    assert!(!is_status_condition_false(&conditions, "Missing"));
    assert!(is_status_condition_present_and_equal(
        &conditions,
        "Progressing",
        "Unknown"
    ));
    assert!(!is_status_condition_true(&conditions, "Missing"));
}
