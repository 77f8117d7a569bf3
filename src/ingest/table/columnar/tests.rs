
use super::*;

#[test]
fn the_key_cache_gives_the_code_put_for_a_key_and_never_one_for_a_long_cell() {
    let row = b"llama-7,H100,128,a-model-name-longer-than-fifteen-bytes\n";
    let model = cell_key(row, 0, 7);
    let gpu = cell_key(row, 8, 12);
    let long = cell_key(row, 17, 55);
    assert_eq!(long, 0);
    let mut cache = KeyCache::new();
    // Nothing put yet: not even the "last" key (0 at first) is found.
    assert_eq!(cache.get(long), None);
    assert_eq!(cache.get(model), None);
    cache.put(model, 3);
    cache.put(long, 9);
    assert_eq!(cache.get(long), None);
    assert_eq!(cache.get(model), Some(3));
    assert_eq!(cache.get(model), Some(3));
    cache.put(gpu, 1);
    assert_eq!((cache.get(gpu), cache.get(model)), (Some(1), Some(3)));
    assert_eq!(cache.get(cell_key(row, 8, 11)), None);
}
